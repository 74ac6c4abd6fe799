// A big run's report in headless Chromium (report_big_browser_test.sh): 600 GPUs written with
// small limits. Checks that the heatmap draws groups of GPUs (its tooltip names them), the
// per-GPU table shows one page at a time and pages on, a search finds one GPU, sorting puts the
// straggler first, clicking the straggler under the load balance shows its row, and a GPU found
// by the timelines' search box is drawn on them.
// Usage (from web/): node report_big_browser_test.mjs REPORT.html SCREENSHOT.png
import { finish, withReport } from "./browser.mjs";

const [report, screenshot] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

await withReport(report, async (page, errors) => {
  const table = async () => page.evaluate(() => ({
    rows: Array.from(document.querySelectorAll("#gpu-table tbody tr")).map((tr) =>
      [tr.querySelector("td").textContent, tr.className]),
    info: document.querySelector("#gpu-table .page-info").textContent,
  }));
  const shape = await page.evaluate(() => {
    const d = window.gs.data;
    return { gpus: d.gpus.length, rows: d.gpu_grid.rows, bins: d.gpu_grid.bins, fields: d.over_time_fields,
      pageRows: window.gs.pageRows, options: document.querySelectorAll("#gpu-select option").length,
      straggler: window.gs.gpuLabel(d.balance.stragglers[0].gpu),
      gpu300: window.gs.gpuLabel(300) };
  });
  check(shape.gpus === 600, "600 GPUs expected, got " + shape.gpus);
  check(shape.rows && shape.rows.gpus_per_row * shape.rows.count >= 600 && shape.rows.count <= 64,
        "heatmap rows are not groups of GPUs: " + JSON.stringify(shape.rows && { ...shape.rows, metrics: 0 }));
  check(shape.rows && shape.bins < shape.rows.bins, "per-GPU series not binned coarser than the heatmap's");
  check(JSON.stringify(shape.fields) === '["mean"]', "summaries: " + JSON.stringify(shape.fields));
  check(shape.options <= 201, "the GPU list holds " + shape.options + " options");
  check(shape.straggler === "node74 rank 74 GPU 7", "straggler: " + shape.straggler);

  // The heatmap's tooltip names a group of GPUs.
  const heat = page.locator("#heatmap-canvas");
  await heat.scrollIntoViewIfNeeded();
  const hb = await heat.boundingBox();
  await page.mouse.move(hb.x + hb.width / 2, hb.y + 3);
  const tip = await page.locator("#heatmap .tooltip").textContent();
  check(/^node0 rank 0 GPU 0 – .* \(mean of \d+ GPUs\)/.test(tip), "heatmap tooltip: " + tip);

  // One page at a time, then the next.
  let t = await table();
  check(t.rows.length === shape.pageRows, "first page: " + t.rows.length + " rows");
  check(t.info.startsWith("rows 1–" + shape.pageRows + " of 600"), "page info: " + t.info);
  await page.click("#gpu-table .page-next");
  t = await table();
  check(t.rows[0][0] === await page.evaluate((i) => window.gs.gpuLabel(window.gs.gpuOrder()[i]), shape.pageRows),
        "second page starts with " + t.rows[0][0]);
  // Found by host and GPU.
  await page.fill("#gpu-table .table-search", "node37 gpu 4");
  t = await table();
  check(t.rows.length === 1 && t.rows[0][0] === "node37 rank 37 GPU 4", "search: " + JSON.stringify(t.rows));
  // Sorted with the straggler first.
  await page.fill("#gpu-table .table-search", "");
  await page.selectOption("#gpu-table .table-sort", { label: "activity, lowest first" });
  t = await table();
  check(t.rows[0][0] === shape.straggler && t.rows[0][1].includes("straggler"), "lowest activity: " + t.rows[0]);
  // The straggler named under the load balance leads to its row.
  await page.click("#stragglers li.straggler");
  t = await table();
  check(t.rows.length === 1 && t.rows[0][0] === shape.straggler, "straggler link: " + JSON.stringify(t.rows));

  // A GPU found by the timelines' search box, drawn on the timelines.
  await page.fill("#gpu-find", "node37 rank 37 gpu 4");
  const found = await page.evaluate(() => Array.from(document.querySelectorAll("#gpu-select option"))
    .map((o) => [o.value, o.textContent]));
  const gpu = found.find(([, text]) => text.startsWith("node37 rank 37 GPU 4"));
  check(gpu, "the timelines' GPU search did not list it: " + JSON.stringify(found.slice(0, 5)));
  if (gpu) {
    await page.selectOption("#gpu-select", [gpu[0]]);
    const chart = await page.evaluate(() => [window.gs.view.charts[0].series.length,
      document.querySelector("#timelines .chart-note").textContent]);
    check(chart[0] === 5, "the chosen GPU should add one line (5 series), got " + chart[0]);
    check(/per-GPU lines in .* bins/.test(chart[1]), "chart note: " + chart[1]);
  }
  check(errors.length === 0, "errors: " + errors.join(" | "));
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: screenshot, fullPage: false });
});
finish(failures, report);
