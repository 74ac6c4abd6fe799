// The site report in headless Chromium (site_report_browser_test.sh). The small site
// (tests/report/synthetic_site.hpp, small_site): the totals shown are the data's, the heatmap's
// cell (node 0, day 0) is painted in the colour of 75 % and (node 1, day 0) is blank, its
// tooltip names the cell, the top jobs are in order with the hostile name shown literally and
// the right command, the tables sort, the usage chart draws. The big site (a year of 2,000
// nodes): the same heatmap cells and order, and the time it takes to load and draw, printed
// (it fails only past an absurd 60 s).
// Usage (from web/): node site_report_browser_test.mjs SMALL.html BIG.html SMALL.png BIG.png
import { finish, paintedPixels, tooltipText, withReport } from "./browser.mjs";

const [small, big, smallShot, bigShot] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };
const hostileName = "train \"big\" <model> & </script><b>x</b> ünïcode 名前";
const hostileUser = "o'brien <ü>";

// The pixel of heatmap cell (node, bin), and the colour the page means for its byte.
const cellPixel = (page, node, bin) => page.evaluate(([n, b]) => {
  const S = window.gsSite, canvas = document.getElementById("heatmap-canvas");
  const at = S.heatCell(n, b), byte = S.cells[n * S.data.heatmap.bins + b];
  const px = Array.from(canvas.getContext("2d").getImageData(at.x, at.y, 1, 1).data);
  return { px, byte, expected: byte === 255 ? null : S.utilColour(byte), at };
}, [node, bin]);

// The totals cards against the data (numbers as shown, commas removed, within their rounding).
async function checkTotals(page, label) {
  const t = await page.evaluate(() => {
    const text = (id) => document.querySelector("#" + id + " .value").textContent;
    return { data: window.gsSite.data.totals,
             shown: ["total-jobs", "total-gpu-hours", "total-idle-gpu-hours", "total-energy",
                     "total-co2", "total-util"].map(text) };
  });
  const d = t.data, want = [d.jobs, d.gpu_hours, d.idle_gpu_hours, d.energy_j / 3.6e6, d.co2_g / 1000, d.util_pct];
  t.shown.forEach((s, i) => {
    const v = parseFloat(s.replace(/,/g, ""));
    const rounding = Math.abs(want[i]) >= 10000 ? 0.5 : 0.05;  // big figures have no decimals
    check(Math.abs(v - want[i]) <= rounding + 1e-9 * Math.abs(want[i]), label + " total " + i + ": shows " + s + ", data " + want[i]);
  });
  return t.shown;
}

async function checkHeatmapCells(page, label) {
  const busy = await cellPixel(page, 0, 0), idle = await cellPixel(page, 1, 0);
  check(busy.byte === 188, label + ": cell (0, 0) should be 75 % (byte 188), is " + busy.byte);
  // Independently of the page: 75 % on the ramp is about rgb(95, 201, 98), a green.
  check(busy.px[3] === 255 && Math.abs(busy.px[0] - 95) + Math.abs(busy.px[1] - 201) + Math.abs(busy.px[2] - 98) <= 6,
        label + ": busy cell pixel " + JSON.stringify(busy));
  check(busy.expected && busy.expected.every((c, i) => Math.abs(c - busy.px[i]) <= 2),
        label + ": busy cell not in its byte's colour " + JSON.stringify(busy));
  check(idle.byte === 255 && idle.px[3] === 0, label + ": idle cell not blank " + JSON.stringify(idle));
}

async function topRows(page) {
  return page.evaluate(() => Array.from(document.querySelectorAll("#top-idle-table tbody tr")).map((tr) => {
    const td = tr.querySelectorAll("td");
    return { rank: td[0].textContent, job: td[1].textContent, name: td[2].textContent,
             user: td[3].textContent, flags: td[8].textContent, command: tr.querySelector("code").textContent };
  }));
}

await withReport(small, async (page, errors) => {
  const shown = await checkTotals(page, "small");
  check(JSON.stringify(shown) === JSON.stringify(["42", "1,234.5", "234.6", "567.8", "98.8", "43.2 %"]),
        "small totals: " + JSON.stringify(shown));
  const subtitle = await page.textContent("#subtitle");
  check(subtitle === "2025-12-01 00:00 – 2025-12-08 00:00 UTC · from the accounting database /var/lib/gpuscope/jobs.db",
        "subtitle: " + subtitle);
  check((await page.textContent("#title")) === 'GPU jobs of "test" <cluster>', "title");

  await checkHeatmapCells(page, "small");
  const canvas = page.locator("#heatmap-canvas");
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const at = await page.evaluate(() => window.gsSite.heatCell(0, 0));
  await page.mouse.move(box.x + at.x, box.y + at.y);
  const tip = await tooltipText(page, "#heatmap");
  check(tip === "gpu-001 · 2025-12-01 UTC · utilization 75 % · busy 100 %", "heatmap tooltip: " + tip);

  const rows = await topRows(page);
  check(rows.map((r) => r.rank + ":" + r.job).join(" ") === "1:1001 2:1002 3:1003", "top jobs: " + JSON.stringify(rows));
  check(rows[0].name === hostileName, "hostile name shown as " + JSON.stringify(rows[0].name));
  check(rows[0].user === hostileUser, "hostile user shown as " + JSON.stringify(rows[0].user));
  check(rows[0].flags === "idletoo-large" && rows[2].flags === "straggler", "flags: " + rows.map((r) => r.flags));
  check(rows[0].command === "gpuscope job 1001 -o 1001.html", "command: " + rows[0].command);
  check(await page.evaluate(() => !document.querySelector("#report b, #report script, #report model")),
        "a name became markup");
  await page.click("#top-idle-table tbody tr:first-child button.copy");
  await page.waitForFunction(() => document.querySelector("#top-idle-table button.copy").textContent !== "copy",
                             null, { timeout: 5000 }).catch(() => {});
  const copied = await page.textContent("#top-idle-table tbody tr:first-child button.copy");
  check(copied === "copied" || copied.startsWith("selected"), "copy button says " + copied);

  // Sorting: the users by idle GPU-hours, most first, puts the hostile user first.
  await page.click("#user-table th:nth-child(4)");
  const first = await page.textContent("#user-table tbody tr:first-child td:first-child");
  check(first === hostileUser, "users sorted by idle GPU-hours start with " + first);
  check((await page.locator("#efficiency-table tbody tr").count()) === 10, "efficiency bands");
  check((await paintedPixels(page, "#usage-chart")) > 500, "the usage chart drew nothing");
  await page.selectOption("#usage-by", "by_account");
  check((await page.textContent("#usage-chart .u-legend")).includes("chem & bio"), "account legend");
  check(errors.length === 0, "small errors: " + errors.join(" | "));
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: smallShot, fullPage: true });
});

await withReport(big, async (page, errors) => {
  const t = await page.evaluate(() => ({ ...window.gsSite.timings, nodes: window.gsSite.data.heatmap.nodes.length,
    bins: window.gsSite.data.heatmap.bins, height: document.getElementById("heatmap-canvas").height,
    ids: window.gsSite.data.top_idle.map((j) => j.shown_id) }));
  console.log("big site report: " + t.nodes + " nodes × " + t.bins + " bins; ready " + Math.round(t.readyMs) +
              " ms after opening (data read " + Math.round(t.readMs) + " ms, page drawn " + Math.round(t.drawMs) +
              " ms, of it the heatmap " + Math.round(t.heatmapMs) + " ms)");
  check(t.nodes === 2000 && t.bins === 365, "big heatmap shape " + t.nodes + " × " + t.bins);
  check(t.height >= 2000, "big heatmap canvas " + t.height + " px high: a node has less than a pixel");
  check(t.readyMs < 60000, "the big page took " + t.readyMs + " ms");
  await checkTotals(page, "big");
  await checkHeatmapCells(page, "big");
  const rows = await topRows(page);
  check(rows.length === 100 && rows.map((r) => r.job).join() === t.ids.join(), "big top jobs out of order");
  check(rows[0].name === hostileName && rows[1].command === "gpuscope job 500001 -o 500001.html",
        "big first rows: " + JSON.stringify(rows.slice(0, 2)));
  check((await page.locator("#user-table tbody tr").count()) === 50, "50 users expected");
  check(errors.length === 0, "big errors: " + errors.join(" | "));
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: bigShot, fullPage: false });
}, 90000);
finish(failures, small + " and " + big);
