// What the browser tests share: open a gpuscope HTML report in headless Chromium (playwright-core,
// installed in web/, and Debian's chromium) with a fresh profile, collect console errors, page
// errors and any network request (a report must make none), wait for window.gpuscopeReady, and
// close the browser whatever happens. Run the tests from web/.
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(join(process.cwd(), "package.json"));
const { chromium } = require("playwright-core");

// Calls `body(page, errors)` once `report` is drawn (within `timeoutMs`); `errors` keeps filling
// while it runs.
export async function withReport(report, body, timeoutMs = 30000) {
  const profile = mkdtempSync(join(tmpdir(), "gpuscope-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.GPUSCOPE_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run"],
    viewport: { width: 1400, height: 1000 },
  });
  try {
    const page = context.pages()[0] || (await context.newPage());
    const errors = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
    page.on("pageerror", (e) => errors.push("page error: " + e.message));
    page.on("request", (r) => {
      if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) errors.push("request: " + r.url());
    });
    await page.goto(pathToFileURL(resolve(report)).href);
    await page.waitForFunction(() => window.gpuscopeReady === true, null, { timeout: timeoutMs });
    return await body(page, errors);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

// Ends the test: the failures on stderr and exit status 1, or PASS.
export function finish(failures, report) {
  if (failures.length) {
    console.error("FAIL: " + failures.join("\n      "));
    process.exit(1);
  }
  console.log("PASS " + report);
}

// How many coloured pixels the canvas inside `selector` has (the axes and labels are grey): a
// chart that drew nothing has about none.
export async function paintedPixels(page, selector) {
  return page.evaluate((sel) => {
    const box = document.querySelector(sel);
    const canvas = box ? box.querySelector("canvas") : null;
    if (!canvas) return 0;
    const px = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 3] > 0 && Math.abs(px[i] - px[i + 1]) + Math.abs(px[i + 1] - px[i + 2]) > 20) painted++;
    }
    return painted;
  }, selector);
}

// The text of the tooltip inside `selector` once it shows, or "" when it stays hidden for 5 s:
// the tooltip follows the pointer on the next frame, which a loaded machine may delay.
export async function tooltipText(page, selector) {
  const visible = (sel) => {
    const t = document.querySelector(sel + " .tooltip");
    return t && t.style.display !== "none" ? t.textContent : "";
  };
  await page.waitForFunction(visible, selector, { timeout: 5000 }).catch(() => {});
  return page.evaluate(visible, selector);
}
