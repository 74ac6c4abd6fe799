// Opens a gpuscope HTML report of a run with marked phases in headless Chromium (playwright-core)
// and checks the phase lane and table: no console or page error; the lane is drawn (not blank)
// above the metric timelines and shares their zoom; hovering a phase shows its name, energy and
// power; the "Phases" table has a row per name. Writes a screenshot of the lane.
// Past the instances listed one by one, the lane is in bins and says so.
// Usage (from web/): node phases_browser_test.mjs REPORT.html SCREENSHOT.png NAMES slices|bins
import { finish, paintedPixels, tooltipText, withReport } from "./browser.mjs";

const [report, screenshot, names, mode] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

await withReport(report, async (page, errors) => {
  const painted = await paintedPixels(page, "#phase-lane");
  const result = await page.evaluate(() => {
    const box = document.getElementById("phase-lane");
    const charts = Array.from(document.querySelectorAll("#timelines .chart"));
    return {
      present: !!box,
      firstChart: charts.length ? charts[0].id : null,
      inCharts: window.gs.view.charts.includes(window.gs.phaseChart),
      rows: document.querySelectorAll("#phases tbody tr").length,
      mode: window.gs.data.phase_lane ? window.gs.data.phase_lane.mode : null,
      note: document.getElementById("phase-note") ? document.getElementById("phase-note").textContent : "",
      table: document.querySelector("#phases table") ? document.querySelector("#phases table").textContent : "",
    };
  });
  console.log(JSON.stringify({ painted, ...result }));
  check(result.present, "no #phase-lane chart");
  check(painted > 200, "the phase lane is blank (" + painted + " painted pixels)");
  check(result.firstChart === "phase-lane", "the lane is not above the metric timelines: " + result.firstChart);
  check(result.inCharts, "the lane does not share the timelines' zoom");
  check(result.rows === Number(names), "phase table rows " + result.rows + ", expected " + names);
  check(result.mode === mode, "mode " + result.mode + ", expected " + mode);
  if (mode === "bins") {
    check(/bins/.test(result.note) && /perfetto/.test(result.note), "bins mode not said: " + result.note);
    // Hover the busiest bin of the first row where a phase started: how many, and the longest.
    // Zoomed in around it first: 2000 bins are narrower than a pixel at full width.
    await page.locator("#phase-lane .u-over").scrollIntoViewIfNeeded();
    await page.evaluate(() => {
      const B = window.gs.data.phase_lane.bins, row = B.rows[0];
      let best = row.started.findIndex((n) => n > 0);
      row.busy_s.forEach((v, i) => { if (row.started[i] > 0 && v > row.busy_s[best]) best = i; });
      window.gpuscopeTestBin = best;
      window.gs.setView((best - 10) * B.bin_s, (best + 11) * B.bin_s);
    });
    await page.waitForTimeout(50);
    const at = await page.evaluate(() => {
      const u = window.gs.phaseChart, B = window.gs.data.phase_lane.bins;
      const r = u.over.getBoundingClientRect();
      return { x: r.left + u.valToPos((window.gpuscopeTestBin + 0.5) * B.bin_s, "x"),
               y: r.top + u.valToPos(u.scales.y.max - 0.5, "y") };
    });
    await page.mouse.move(at.x, at.y);
    const tip = await tooltipText(page, "#phase-lane");
    console.log(JSON.stringify({ tip }));
    check(/[1-9]\d* phases started/.test(tip) && /longest: step/.test(tip), "the bin tooltip: " + JSON.stringify(tip));
    check(errors.length === 0, "errors: " + errors.join(" | "));
    await page.locator("#phase-lane").screenshot({ path: screenshot });
    return;
  }
  check(/checkpoint/.test(result.table), "the table does not list the checkpoint");

  // Hover the middle of the checkpoint: the tooltip names it with its energy and power.
  await page.locator("#phase-lane .u-over").scrollIntoViewIfNeeded();
  const at = await page.evaluate(() => {
    const u = window.gs.phaseChart, p = window.gs.data.phase_lane;
    const j = p.names.indexOf("checkpoint") < 0 ? -1 : p.name.indexOf(p.names.indexOf("checkpoint"));
    const t = (p.start_s[j] + p.end_s[j]) / 2, rows = u.scales.y.max;
    const r = u.over.getBoundingClientRect();
    return { x: r.left + u.valToPos(t, "x"), y: r.top + u.valToPos(rows - 0.5, "y") };
  });
  await page.mouse.move(at.x, at.y);
  const tip = await tooltipText(page, "#phase-lane");
  console.log(JSON.stringify({ tip }));
  check(/^checkpoint/.test(tip) && /energy \d+ J/.test(tip) && /power \d+ W/.test(tip) && /SM active/.test(tip),
        "the tooltip does not describe the checkpoint: " + JSON.stringify(tip));
  // The lane follows the shared zoom.
  await page.evaluate(() => window.gs.setView(1, 2));
  await page.waitForTimeout(50);
  const range = await page.evaluate(() => [window.gs.phaseChart.scales.x.min, window.gs.phaseChart.scales.x.max]);
  check(Math.abs(range[0] - 1) < 1e-9 && Math.abs(range[1] - 2) < 1e-9, "the lane ignores the zoom: " + range);
  await page.evaluate(() => window.gs.setView(window.gs.view.full[0], window.gs.view.full[1]));
  check(errors.length === 0, "errors: " + errors.join(" | "));
  await page.locator("#phase-lane").screenshot({ path: screenshot });
});
finish(failures, report);
