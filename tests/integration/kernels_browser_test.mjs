// Opens a gpuscope HTML report of a `profile --trace-kernels` run in headless Chromium
// (playwright-core) and checks the kernel lanes: no console or page error and no network
// request; one lane per GPU that ran kernels, drawn (not blank) under the metric timelines; the
// tooltip over a kernel names it and its duration; zooming the timelines zooms the lanes; in
// bins mode the report says the kernels were aggregated. Writes a screenshot of the lanes.
// Usage (from web/): node kernels_browser_test.mjs REPORT.html SCREENSHOT.png slices|bins LANES
import { finish, paintedPixels, tooltipText, withReport } from "./browser.mjs";

const [report, screenshot, mode, lanes] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

await withReport(report, async (page, errors) => {

  const painted = await paintedPixels(page, "#kernel-lanes");
  const result = await page.evaluate(() => {
    const box = document.getElementById("kernel-lanes");
    const charts = Array.from(document.querySelectorAll("#timelines .chart"));
    const k = window.gs.data.kernels;
    return {
      present: !!box,
      lastChart: charts.length ? charts[charts.length - 1].id : null,
      mode: k ? k.mode : null,
      lanes: k ? k.lanes.length : 0,
      total: k ? k.total : 0,
      note: document.getElementById("kernel-note") ? document.getElementById("kernel-note").textContent : "",
      inCharts: window.gs.view.charts.includes(window.gs.kernelChart),
    };
  });
  console.log(JSON.stringify({ painted, ...result }));
  check(result.present, "no #kernel-lanes chart");
  check(painted > 200, "the kernel lanes are blank (" + painted + " painted pixels)");
  check(result.lastChart === "kernel-lanes", "the lanes are not under the metric timelines");
  check(result.mode === mode, "mode " + result.mode + ", expected " + mode);
  check(result.lanes === Number(lanes), "lanes " + result.lanes + ", expected " + lanes);
  check(result.inCharts, "the lanes do not share the timelines' zoom");
  if (mode === "bins") check(/aggregat|bin/.test(result.note) && /perfetto/.test(result.note), "bins mode not said: " + result.note);

  // Hover the middle of the first lane's first kernel (or busiest bin): the tooltip names it.
  // Zoom in around it first, so that the kernel (or the bin, a fraction of a pixel wide at full
  // view) is wide enough to hit whatever pixel the pointer lands on.
  await page.evaluate(() => {
    const k = window.gs.data.kernels, lane = k.lanes[0];
    if (k.mode === "slices") {
      const t = (lane.start_ns[0] + lane.duration_ns[0] / 2) / 1e9;
      window.gs.setView(Math.max(0, t - 0.002), t + 0.002);
    } else {
      let best = 0;
      lane.busy_ns.forEach((v, i) => { if (v > lane.busy_ns[best]) best = i; });
      window.gs.setView(Math.max(0, (best - 2) * k.bin_s), (best + 3) * k.bin_s);
      window.gs.hoverBin = best;
    }
  });
  await page.waitForTimeout(50);  // uPlot applies scales in a microtask
  await page.locator("#kernel-lanes .u-over").scrollIntoViewIfNeeded();
  const at = await page.evaluate(() => {
    const u = window.gs.kernelChart, k = window.gs.data.kernels, lane = k.lanes[0], n = k.lanes.length;
    const t = k.mode === "slices" ? (lane.start_ns[0] + lane.duration_ns[0] / 2) / 1e9
                                  : (window.gs.hoverBin + 0.5) * k.bin_s;
    const r = u.over.getBoundingClientRect();
    return { x: r.left + u.valToPos(t, "x"), y: r.top + u.valToPos(n - 0.5, "y") };
  });
  await page.mouse.move(at.x, at.y);
  const tip = await tooltipText(page, "#kernel-lanes");
  console.log(JSON.stringify({ tip }));
  if (mode === "slices") {
    check(/gemm|relu/.test(tip) && /µs|ms|ns/.test(tip), "the tooltip does not name the kernel: " + JSON.stringify(tip));
  } else {
    check(/kernels started/.test(tip) && /longest/.test(tip), "the bin tooltip: " + JSON.stringify(tip));
  }
  // The lanes follow the shared zoom.
  await page.evaluate(() => window.gs.setView(0.2, 0.6));
  await page.waitForTimeout(50);  // uPlot applies scales in a microtask
  const ranges = await page.evaluate(() => window.gs.view.charts.map((u) => [u.scales.x.min, u.scales.x.max]));
  check(ranges.every((r) => Math.abs(r[0] - 0.2) < 1e-9 && Math.abs(r[1] - 0.6) < 1e-9),
        "not every chart follows the zoom: " + JSON.stringify(ranges));
  await page.evaluate(() => window.gs.setView(window.gs.view.full[0], window.gs.view.full[1]));
  check(errors.length === 0, "errors: " + errors.join(" | "));
  await page.locator("#kernel-lanes").screenshot({ path: screenshot });
});
finish(failures, report);
