// Opens a gpuscope HTML report in headless Chromium (playwright-core, Debian's chromium) and
// checks it: no console or page errors, no network request, uPlot charts and the heatmap drawn
// (not blank), the straggler highlighted. Writes a screenshot and prints the time from
// navigation start to window.gpuscopeReady.
// Usage (from web/, where playwright-core is installed):
//   node report_browser_test.mjs REPORT.html SCREENSHOT.png EXPECTED_GPUS [EXPECTED_OUTSIDERS]
import { finish, withReport } from "./browser.mjs";

const [report, screenshot, expectedGpus, expectedOutsiders] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

await withReport(report, async (page, errors) => {
  const readyMs = await page.evaluate(() => performance.now());

  const result = await page.evaluate(() => {
    // A canvas is blank when every sampled pixel equals the first one.
    const blank = (c) => {
      const ctx = c.getContext("2d"), { width, height } = c;
      if (!width || !height) return true;
      const px = ctx.getImageData(0, 0, width, height).data;
      for (let i = 4; i < px.length; i += 4 * 7) {
        if (px[i] !== px[0] || px[i + 1] !== px[1] || px[i + 2] !== px[2] || px[i + 3] !== px[3]) return false;
      }
      return true;
    };
    const charts = Array.from(document.querySelectorAll("#timelines .uplot canvas"));
    const heat = document.getElementById("heatmap-canvas");
    const bal = document.getElementById("balance-canvas");
    // The balance chart paints stragglers in the warning colour (#d1495b).
    const hasRed = (c) => {
      const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < px.length; i += 4) if (px[i] === 209 && px[i + 1] === 73 && px[i + 2] === 91) return true;
      return false;
    };
    return {
      charts: charts.length,
      blankCharts: charts.filter(blank).length,
      heatmap: heat ? !blank(heat) : false,
      balance: bal ? !blank(bal) : false,
      balanceRed: bal ? hasRed(bal) : false,
      heatRed: heat ? hasRed(heat) : false,
      stragglerRows: Array.from(document.querySelectorAll("#gpu-table tr.straggler td:first-child")).map((t) => t.textContent),
      stragglerItems: document.querySelectorAll("#stragglers li.straggler").length,
      gpus: window.gs.data.gpus.length,
      findings: document.querySelectorAll("#diagnosis li").length,
      title: document.title,
      marks: window.gs.data.marks.length,
      meanRows: document.querySelectorAll("#gpu-means tbody tr").length,
      processRows: document.querySelectorAll("#processes tbody tr").length,
      outsiderRows: document.querySelectorAll("#processes tbody tr.straggler").length,
      foreignFindings: document.querySelectorAll("#diagnosis li.foreign_process").length,
      periodRows: document.querySelectorAll("#carbon-periods tbody tr").length,
      intensityChart: Array.from(document.querySelectorAll("#intensity-chart canvas")).some((c) => !blank(c)),
    };
  });
  console.log(JSON.stringify({ readyMs: Math.round(readyMs), ...result }));
  check(errors.length === 0, "errors: " + errors.join(" | "));
  check(result.charts >= 3, "expected at least 3 timeline charts, got " + result.charts);
  check(result.blankCharts === 0, result.blankCharts + " blank timeline canvases");
  check(result.heatmap, "the heatmap is blank");
  check(result.balance, "the load-balance chart is blank");
  check(result.balanceRed && result.heatRed, "the straggler is not drawn in red");
  check(result.stragglerRows.length >= 1 && result.stragglerRows.every((t) => t.endsWith("GPU 3")),
        "straggler rows: " + JSON.stringify(result.stragglerRows));
  check(result.stragglerItems >= 1, "no straggler listed under the load balance");
  check(result.gpus === Number(expectedGpus), "expected " + expectedGpus + " GPUs, got " + result.gpus);
  check(result.findings >= 1, "no diagnosis");
  check(result.meanRows === result.gpus, "per-GPU means table: " + result.meanRows + " rows");
  if (expectedOutsiders !== undefined) {
    // The job's own process and the outsiders, the outsiders in red and diagnosed.
    check(result.processRows === Number(expectedOutsiders) + 1, "process rows: " + result.processRows);
    check(result.outsiderRows === Number(expectedOutsiders), "outsider rows: " + result.outsiderRows);
    check(result.foreignFindings >= 1, "no diagnosis of the processes outside the job");
    // The report made with --carbon-series: the periods' table and the intensity chart.
    check(result.periodRows >= 3, "carbon periods: " + result.periodRows + " rows");
    check(result.intensityChart, "the grid intensity chart is blank");
  }

  // Per-GPU lines on demand: choose GPU 3, expect an extra series in the power chart.
  await page.selectOption("#gpu-select", [String(result.gpus - 1)]);
  const series = await page.evaluate(() => window.gs.view.charts[0].series.length);
  check(series === 5, "selecting a GPU should add one line (5 series), got " + series);
  // Zoom: the wheel narrows every chart's x range.
  const before = await page.evaluate(() => window.gs.view.max - window.gs.view.min);
  const over = page.locator("#timelines .uplot .u-over").first();
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -300);
  await page.waitForTimeout(100);
  const after = await page.evaluate(() => [window.gs.view.max - window.gs.view.min,
    window.gs.view.charts.map((u) => u.scales.x.max - u.scales.x.min)]);
  check(after[0] < before && after[1].every((r) => Math.abs(r - after[0]) < 1e-6 * before),
        "wheel zoom did not narrow every chart: " + JSON.stringify([before, after]));
  await page.click("text=reset zoom");
  await page.evaluate(() => window.scrollTo(0, 0));
  check(errors.length === 0, "errors after interaction: " + errors.join(" | "));
  await page.screenshot({ path: screenshot, fullPage: false });
});
finish(failures, report);
