// The HTML report of gssr's fixture folder (tests/fixtures/gssr), made with
// --detect-outliers none, in headless Chromium: it shows the figures gssr printed for the same
// data (gssr-analyze-output.txt: each GPU's total_flop_activity and SM active), names the
// straggler and says what gssr did not record (docs/gssr.md), in the diagnosis and under the run
// table.
// Usage (from web/): node report_gssr_test.mjs REPORT.html SCREENSHOT.png
import { finish, withReport } from "./browser.mjs";

const [report, screenshot] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

await withReport(report, async (page, errors) => {
  const result = await page.evaluate(() => {
    const table = document.querySelector("#gpu-table table") || document.querySelector("#gpu-table");
    const heads = Array.from(table.querySelectorAll("th")).map((t) => t.textContent);
    const rows = Array.from(table.querySelectorAll("tbody tr")).map((r) =>
      Array.from(r.querySelectorAll("td")).map((t) => t.textContent));
    const flop = heads.indexOf("FLOP activity");
    return {
      flop: rows.map((r) => r[flop]),
      labels: rows.map((r) => r[0]),
      stragglers: Array.from(document.querySelectorAll("#gpu-table tr.straggler td:first-child")).map((t) => t.textContent),
      notes: Array.from(document.querySelectorAll("#diagnosis p.note")).map((p) => p.textContent),
      smMeans: window.gs.data.gpus.map((g) => g.over_time.sm_active_pct.mean),
      flopMeans: window.gs.data.gpus.map((g) => g.over_time.flop_active_pct.mean),
      timelines: Object.keys(window.gs.data.over_space),
      problems: Array.from(document.querySelectorAll("#metadata ul.problems li")).map((li) => li.textContent),
    };
  });
  console.log(JSON.stringify(result));
  check(errors.length === 0, "errors: " + errors.join(" | "));
  // gssr printed (per process 0..7): total_flop_activity and SM active, in percent.
  const gssrFlop = [81.84, 82.12, 82.09, 82.29, 81.97, 82.02, 82.13, 46.87];
  const gssrSm = [71.79, 72.03, 72.01, 72.18, 71.90, 71.94, 72.05, 41.11];
  check(JSON.stringify(result.flop) === JSON.stringify(gssrFlop.map((v) => Math.round(v) + " %")),
        "FLOP activity column: " + JSON.stringify(result.flop));
  check(result.flopMeans.every((v, i) => Math.abs(v - gssrFlop[i]) < 0.005), "FLOP means: " + result.flopMeans);
  check(result.smMeans.every((v, i) => Math.abs(v - gssrSm[i]) < 0.005), "SM active means: " + result.smMeans);
  check(result.stragglers.length === 1 && result.stragglers[0] === "nid000001 rank 7 GPU 3",
        "straggler: " + JSON.stringify(result.stragglers));
  check(result.notes.some((n) => n.startsWith("runs imported from gssr: gssr records no power")),
        "no note on what gssr did not record: " + JSON.stringify(result.notes));
  check(result.timelines.includes("flop_active_pct"), "no FLOP activity timeline");
  // What the runs' data lacks, under the run table, once although all eight runs record it.
  check(result.problems.length === 1 && result.problems[0].startsWith("imported from gssr, which records no power"),
        "run problems: " + JSON.stringify(result.problems));
  await page.screenshot({ path: screenshot, fullPage: false });
});
finish(failures, report);
