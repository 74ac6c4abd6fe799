// A report of a GPU in MIG mode in headless Chromium: no errors, each MIG instance its own row
// and lane labelled "GPU 0 GI n (profile)", its energy and power marked as estimates, the GPU's
// own row measured. Usage (from web/): node report_mig_test.mjs REPORT.html SCREENSHOT.png
import { finish, withReport } from "./browser.mjs";

const [report, screenshot] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

await withReport(report, async (page, errors) => {
  const result = await page.evaluate(() => {
    const rows = Array.from(document.querySelectorAll("#gpu-table tbody tr"));
    return {
      gpus: window.gs.data.gpus.length,
      labels: rows.map((r) => r.querySelector("td").textContent.trim()),
      estimates: rows.map((r) => r.textContent.includes("est.")),
      charts: document.querySelectorAll("#timelines .uplot canvas").length,
    };
  });
  console.log(JSON.stringify(result));
  check(errors.length === 0, "errors: " + errors.join(" | "));
  check(result.gpus === 4, "expected the GPU and 3 instances, got " + result.gpus);
  for (const want of ["GPU 0 GI 1 (4g.40gb)", "GPU 0 GI 3 (2g.20gb)", "GPU 0 GI 7 (1g.10gb)"]) {
    check(result.labels.some((l) => l.endsWith(want)), "no row for " + want + ": " + JSON.stringify(result.labels));
  }
  const gpuRow = result.labels.findIndex((l) => l.endsWith("GPU 0"));
  check(gpuRow >= 0 && !result.estimates[gpuRow], "the GPU's own row must be measured, not est.");
  check(result.estimates.filter(Boolean).length === 3, "the 3 instances' energy marked est.: " + JSON.stringify(result.estimates));
  check(result.charts >= 3, "expected timeline charts, got " + result.charts);
  await page.screenshot({ path: screenshot, fullPage: false });
});
finish(failures, report);
