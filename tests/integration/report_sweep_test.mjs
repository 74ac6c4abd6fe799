// Opens the `gpuscope report` of a sweep database in headless Chromium (playwright-core, Debian's
// chromium) and checks its sweep section against the sweep's own JSON (sweep.json): the four
// recommendations with their settings and their energy and time change against the default, one
// row per setting and per trial with the right figures, the plot decoded and drawn (not blank),
// and the rest of the report drawn after it without errors or network requests.
// Usage (from web/, where playwright-core is installed):
//   node report_sweep_test.mjs REPORT.html SWEEP.json SCREENSHOT.png
import { readFileSync } from "node:fs";
import { finish, withReport } from "./browser.mjs";

const [report, sweepJson, screenshot] = process.argv.slice(2);
const sweep = JSON.parse(readFileSync(sweepJson, "utf8"));
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };
const near = (a, b, tolerance) => Math.abs(a - b) <= tolerance;
// "-33.8 %" → -33.8; "0.0 %" → 0.
const percent = (text) => Number(String(text).replace("%", "").trim());

await withReport(report, async (page, errors) => {
  await page.waitForFunction(() => { const i = document.querySelector("#sweep img.sweep-plot"); return i && i.complete; },
    null, { timeout: 10000 });

  const seen = await page.evaluate(() => {
    const section = document.getElementById("sweep");
    const cells = (tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.textContent);
    const rows = (selector) => Array.from(document.querySelectorAll(selector));
    const img = section ? section.querySelector("img.sweep-plot") : null;
    let plotPixels = 0, plotBlank = true;
    if (img && img.naturalWidth > 0) {
      const c = document.createElement("canvas");
      c.width = img.naturalWidth; c.height = img.naturalHeight;
      const ctx = c.getContext("2d");
      ctx.drawImage(img, 0, 0);
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      plotPixels = c.width * c.height;
      for (let i = 4; i < px.length; i += 4 * 13) {
        if (px[i] !== px[0] || px[i + 1] !== px[1] || px[i + 2] !== px[2]) { plotBlank = false; break; }
      }
    }
    const sections = Array.from(document.querySelectorAll("#report > section")).map((s) => s.id);
    return {
      present: !!section,
      sections,
      heading: section ? section.querySelector("h2").textContent : "",
      visible: section ? section.getBoundingClientRect().height > 200 : false,
      recommendations: rows("#sweep table.sweep-recommendations tbody tr").map((tr) => ({
        selector: tr.dataset.selector, setting: Number(tr.dataset.setting), cells: cells(tr) })),
      settings: rows("#sweep table.sweep-settings tbody tr").map((tr) => ({
        setting: Number(tr.dataset.setting), cells: cells(tr) })),
      trials: rows("#sweep table.sweep-trials tbody tr").map((tr) => ({
        trial: Number(tr.dataset.trial), cells: cells(tr) })),
      plotWidth: img ? img.naturalWidth : 0,
      plotPixels,
      plotBlank,
      charts: document.querySelectorAll("#timelines .uplot canvas").length,
    };
  });
  console.log(JSON.stringify({ sections: seen.sections, recommendations: seen.recommendations.length,
    settings: seen.settings.length, trials: seen.trials.length, plotWidth: seen.plotWidth }));

  check(errors.length === 0, "errors: " + errors.join(" | "));
  check(seen.present, "no #sweep section");
  check(seen.sections[0] === "sweep", "the sweep is not the first section: " + seen.sections.join(","));
  check(seen.sections.includes("timelines") && seen.charts >= 1, "the rest of the report was not drawn");
  check(seen.visible, "the sweep section is not laid out");
  check(seen.heading === "Power-limit sweep", "heading: " + seen.heading);

  // The four recommendations: setting, energy J, time s, energy and time change vs the default.
  check(seen.recommendations.length === 4 && sweep.recommendations.length === 4,
        "expected 4 recommendations, got " + seen.recommendations.length);
  for (const want of sweep.recommendations) {
    const row = seen.recommendations.find((r) => r.selector === want.selector);
    if (!row) { check(false, "no row for " + want.selector); continue; }
    const [title, setting, energy, time, energyChange, timeChange] = row.cells;
    check(title === want.title, want.selector + " title: " + title);
    check(row.setting === want.setting && setting === want.setting + " W",
          want.selector + " setting " + setting + ", want " + want.setting);
    check(near(Number(energy), want.energy_j, 0.051), want.selector + " energy " + energy + " vs " + want.energy_j);
    check(near(Number(time), want.time_s, 0.0006), want.selector + " time " + time + " vs " + want.time_s);
    check(near(percent(energyChange), -want.energy_saving_pct, 0.051),
          want.selector + " energy change " + energyChange + " vs " + -want.energy_saving_pct);
    check(near(percent(timeChange), want.time_change_pct, 0.051),
          want.selector + " time change " + timeChange + " vs " + want.time_change_pct);
  }

  // One row per setting: the mean time and energy with their spread over the repeats.
  const settings = sweep.settings.filter((s) => s.trials > 0);
  check(seen.settings.length === settings.length, "settings rows: " + seen.settings.length);
  for (const want of settings) {
    const row = seen.settings.find((r) => r.setting === want.setting);
    if (!row) { check(false, "no row for setting " + want.setting); continue; }
    const [label, time, energy] = row.cells;
    check(label === want.setting + " W" + (want.baseline ? " (default)" : ""), "setting label " + label);
    check(near(parseFloat(time), want.time_s.mean, 0.0006), "time of " + want.setting + ": " + time);
    check(near(parseFloat(energy), want.energy_j.mean, 0.051), "energy of " + want.setting + ": " + energy);
    if (want.energy_j.count > 1) {
      const range = energy.match(/\(([0-9.]+)–([0-9.]+)\)/);
      check(range && near(Number(range[1]), want.energy_j.min, 0.051) && near(Number(range[2]), want.energy_j.max, 0.051),
            "energy spread of " + want.setting + ": " + energy);
    }
  }

  // Every trial, with its figures.
  const trials = sweep.trials.filter((t) => t.status !== "planned");
  check(seen.trials.length === trials.length, "trial rows: " + seen.trials.length + " of " + trials.length);
  for (const want of trials) {
    const row = seen.trials.find((r) => r.trial === want.trial);
    if (!row) { check(false, "no row for trial " + want.trial); continue; }
    check(row.cells[3] === want.status, "trial " + want.trial + " status " + row.cells[3]);
    check(near(Number(row.cells[4]), want.time_s, 0.0006), "trial " + want.trial + " time " + row.cells[4]);
    check(near(Number(row.cells[5]), want.energy_j, 0.051), "trial " + want.trial + " energy " + row.cells[5]);
  }

  check(seen.plotWidth >= 800 && seen.plotPixels > 0 && !seen.plotBlank,
        "the sweep plot did not decode or is blank (" + seen.plotWidth + " px wide)");
  await page.locator("#sweep").screenshot({ path: screenshot });
});
finish(failures, report);
