// Times opening a gpuscope HTML report in headless Chromium: from navigation start to
// window.gpuscopeReady (everything parsed, decoded and drawn), each load in a fresh page.
// Usage (from web/, where playwright-core is installed):
//   node ../bench/report/open_time.mjs REPORT.html [LOADS]
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(join(process.cwd(), "package.json"));
const { chromium } = require("playwright-core");
const [report, loads = "5"] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), "gpuscope-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.GPUSCOPE_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"],
  viewport: { width: 1400, height: 1000 },
});
const times = [];
let sections = {};
try {
  for (let i = 0; i < Number(loads); i++) {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(pathToFileURL(resolve(report)).href);
    await page.waitForFunction(() => window.gpuscopeReady === true, null, { timeout: 60000 });
    const t = await page.evaluate(() => [window.gpuscopeReadyMs, window.gs.timings,
      performance.getEntriesByType("navigation")[0].domInteractive]);
    times.push(t[0]);
    sections = { ...t[1], dom_interactive: Math.round(t[2]) };
    if (errors.length) throw new Error("page errors: " + errors.join(" | "));
    await page.close();
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ report, loads: times.length, median_ms: Math.round(times[times.length >> 1]),
  min_ms: Math.round(times[0]), max_ms: Math.round(times[times.length - 1]), last_load_ms: sections }));
