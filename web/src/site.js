// gpuscope site report: reads the embedded data (#site-data, #site-heatmap) and builds the page:
// the period and totals, usage per user and account over time, the tables of users and
// accounts, the jobs with the most idle GPU-hours, the efficiency distribution and the nodes ×
// time heatmap (site_heatmap.js). Every text from the data goes in through textContent, never
// as markup. Sets window.gpuscopeReady once everything is drawn (the browser test waits for it)
// and gsSite.timings (what reading and drawing took).
"use strict";

// An embedded element's bytes: base64 of gzip (data-encoding="gzip+base64"), inflated natively.
async function siteBytes(id) {
  const element = document.getElementById(id);
  if (typeof DecompressionStream !== "function") {
    throw new Error("this browser cannot inflate the report's data (no DecompressionStream); " +
                    "open the report in a current Chrome, Edge, Firefox or Safari");
  }
  const binary = atob(element.textContent.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

(function () {
  const S = window.gsSite;
  S.el = function (tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  };
  // A number with thousands separated by commas and `digits` decimals; "n/a" when absent.
  S.fmt = function (v, digits) {
    if (v == null || !isFinite(v)) return "n/a";
    return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  };
  // Big figures without decimals: 8,760,000 GPU-hours, not 8,760,000.0.
  S.big = (v, digits) => S.fmt(v, v != null && Math.abs(v) >= 10000 ? 0 : digits);
  S.kwh = (j) => (j == null ? null : j / 3.6e6);
  S.kg = (g) => (g == null ? null : g / 1000);
  S.share = (part, whole) => (whole > 0 && part != null ? S.fmt((100 * part) / whole, 1) + " %" : "n/a");
  S.section = function (id, title) {
    const s = S.el("section");
    s.id = id;
    s.appendChild(S.el("h2", null, title));
    document.getElementById("report").appendChild(s);
    return s;
  };
  S.palette = ["#2f6fdf", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
               "#a6761d", "#17becf", "#bcbd22", "#8c564b", "#9467bd"];
  S.others = "#9aa4b1";
})();

// A table sortable by each column (a click on its header, again for the other way).
// columns: [{title, key(row) → number or text to sort by, cell(row) → text or Node, cls}].
function siteTable(id, columns, rows) {
  const S = window.gsSite;
  const wrap = S.el("div", "scroll");
  const table = S.el("table", "sortable");
  table.id = id;
  const head = S.el("tr"), body = S.el("tbody");
  const trs = rows.map((row) => {
    const tr = S.el("tr");
    for (const c of columns) {
      const td = S.el("td", c.cls || null);
      const v = c.cell(row);
      if (v instanceof Node) td.appendChild(v);
      else td.textContent = v;
      tr.appendChild(td);
    }
    return tr;
  });
  trs.forEach((tr) => body.appendChild(tr));
  let sorted = -1, down = false;
  columns.forEach((c, k) => {
    const th = S.el("th", c.cls || null, c.title);
    th.title = "sort by " + c.title;
    th.onclick = () => {
      down = sorted === k ? !down : typeof c.key(rows[0] || {}) === "number";
      sorted = k;
      const order = rows.map((_, i) => i);
      const cmp = (a, b) => {
        const x = c.key(rows[a]), y = c.key(rows[b]);
        if (x == null || y == null) return x == null ? (y == null ? a - b : 1) : -1;
        const r = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
        return (down ? -r : r) || a - b;
      };
      order.sort(cmp).forEach((i) => body.appendChild(trs[i]));
      head.querySelectorAll("th").forEach((h, j) => (h.dataset.sort = j === k ? (down ? "down" : "up") : ""));
    };
    head.appendChild(th);
  });
  const thead = S.el("thead");
  thead.appendChild(head);
  table.appendChild(thead);
  table.appendChild(body);
  wrap.appendChild(table);
  return wrap;
}

// The columns of a table of usage rows (users or accounts).
function usageColumns(what) {
  const S = window.gsSite;
  return [
    { title: what, key: (r) => r.group, cell: (r) => r.group, cls: "text" },
    { title: "jobs", key: (r) => r.jobs, cell: (r) => S.fmt(r.jobs, 0) },
    { title: "GPU-hours", key: (r) => r.gpu_hours, cell: (r) => S.big(r.gpu_hours, 1) },
    { title: "idle GPU-hours", key: (r) => r.idle_gpu_hours, cell: (r) => S.big(r.idle_gpu_hours, 1) },
    { title: "idle share", key: (r) => (r.gpu_hours > 0 ? r.idle_gpu_hours / r.gpu_hours : null),
      cell: (r) => S.share(r.idle_gpu_hours, r.gpu_hours) },
    { title: "energy kWh", key: (r) => r.energy_j, cell: (r) => S.big(S.kwh(r.energy_j), 1) },
    { title: "CO₂ kg", key: (r) => r.co2_g, cell: (r) => S.big(S.kg(r.co2_g), 1) },
    { title: "utilization %", key: (r) => r.util_pct, cell: (r) => S.fmt(r.util_pct, 1) },
    { title: "SM active %", key: (r) => r.sm_active_pct, cell: (r) => S.fmt(r.sm_active_pct, 1) },
    { title: "score", key: (r) => r.score, cell: (r) => S.fmt(r.score, 2) },
    { title: "flagged jobs", key: (r) => r.flagged_jobs, cell: (r) => S.fmt(r.flagged_jobs, 0) },
    { title: "without figures", key: (r) => r.jobs_without_figures,
      cell: (r) => S.fmt(r.jobs_without_figures, 0) },
  ];
}

function siteHeader(d) {
  const S = window.gsSite, t = d.totals;
  document.getElementById("subtitle").textContent =
    S.utcTime(d.from_ms, true) + " – " + S.utcTime(d.to_ms, true) + " UTC" +
    (d.source ? " · from " + d.source : "");
  const s = S.section("totals", "Totals");
  const cards = S.el("div", "cards");
  const card = (id, value, label) => {
    const c = S.el("div", "card");
    c.id = id;
    c.appendChild(S.el("div", "value", value));
    c.appendChild(S.el("div", "label", label));
    cards.appendChild(c);
  };
  card("total-jobs", S.fmt(t.jobs, 0), "jobs");
  card("total-gpu-hours", S.big(t.gpu_hours, 1), "GPU-hours");
  card("total-idle-gpu-hours", S.big(t.idle_gpu_hours, 1),
       "idle GPU-hours (" + S.share(t.idle_gpu_hours, t.gpu_hours) + ")");
  card("total-energy", S.big(S.kwh(t.energy_j), 1), "energy, kWh");
  card("total-co2", S.big(S.kg(t.co2_g), 1), "CO₂, kg");
  card("total-util", S.fmt(t.util_pct, 1) + (t.util_pct == null ? "" : " %"), "mean utilization");
  s.appendChild(cards);
  const notes = [];
  if (t.flagged_jobs) notes.push(S.fmt(t.flagged_jobs, 0) + " jobs flagged");
  if (t.jobs_without_figures) {
    notes.push(S.fmt(t.jobs_without_figures, 0) + " jobs without figures (gone with the " +
               "server's retention, no summary kept)");
  }
  if (notes.length) s.appendChild(S.el("p", "muted", notes.join(" · ")));
}

// Usage per group over the periods: each group's GPU-hours (or idle GPU-hours) stacked as bars,
// the idle GPU-hours of all as a line over the GPU-hours.
function usageChart(box, d, groups, what) {
  const S = window.gsSite, n = d.periods.length;
  box.textContent = "";
  if (!n || !groups.length) { box.appendChild(S.el("p", "note", "No usage in this period.")); return; }
  const idleTotal = new Array(n).fill(0);
  groups.forEach((g) => g.idle_gpu_hours.forEach((v, i) => (idleTotal[i] += v || 0)));
  const raw = groups.map((g) => g[what]);
  const stacked = [], sum = new Array(n).fill(0);
  raw.forEach((vals) => { vals.forEach((v, i) => (sum[i] += v || 0)); stacked.push(sum.slice()); });
  const colour = (k) => (groups[k].group === "others" ? S.others : S.palette[k % S.palette.length]);
  const bars = uPlot.paths.bars({ size: [0.85, 48], align: 0 });
  const series = [{ label: "period", value: (u, v) => (v == null ? "" : d.periods[v] || "") }];
  const data = [Array.from({ length: n }, (_, i) => i)];
  for (let k = groups.length - 1; k >= 0; k--) {  // the highest stack first, the lower ones over it
    series.push({ label: groups[k].group, fill: colour(k), stroke: colour(k), width: 0, paths: bars,
                  points: { show: false },
                  value: (u, v, si, i) => (i == null ? "" : S.fmt(raw[k][i], 1)) });
    data.push(stacked[k]);
  }
  if (what === "gpu_hours") {
    series.push({ label: "idle GPU-hours, all", stroke: "#1d232b", width: 1.5, dash: [4, 3],
                  points: { show: false }, value: (u, v) => S.fmt(v, 1) });
    data.push(idleTotal);
  }
  const width = Math.min(1240, document.getElementById("report").clientWidth - 10);
  const opts = {
    width, height: 300,
    scales: { x: { time: false, range: () => [-0.5, n - 0.5] }, y: { range: (u, lo, hi) => [0, hi * 1.05 || 1] } },
    axes: [{ space: 70, incrs: [1, 2, 3, 4, 7, 14, 28, 30, 61, 91, 182, 365],
             values: (u, splits) => splits.map((i) => (Number.isInteger(i) && d.periods[i]) || "") },
           { label: what === "gpu_hours" ? "GPU-hours" : "idle GPU-hours", size: 60 }],
    series, legend: { live: true },
  };
  box.appendChild(S.el("div", "chart-title", what === "gpu_hours"
    ? "GPU-hours per period, stacked by group; the dashed line is all idle GPU-hours"
    : "idle GPU-hours per period, stacked by group"));
  const host = S.el("div", "chart");
  box.appendChild(host);
  new uPlot(opts, data, host);
}

function usageSection(d) {
  const S = window.gsSite;
  const s = S.section("usage", "Usage over time");
  const controls = S.el("div", "controls");
  const select = (id, options) => {
    const e = S.el("select");
    e.id = id;
    options.forEach(([value, label]) => e.appendChild(new Option(label, value)));
    controls.appendChild(e);
    return e;
  };
  const by = select("usage-by", [["by_user", "per user"], ["by_account", "per account"]]);
  const what = select("usage-what", [["gpu_hours", "GPU-hours"], ["idle_gpu_hours", "idle GPU-hours"]]);
  s.appendChild(controls);
  const box = S.el("div");
  box.id = "usage-chart";
  s.appendChild(box);
  const draw = () => usageChart(box, d, d[by.value], what.value);
  by.onchange = draw;
  what.onchange = draw;
  draw();
}

function usageTables(d) {
  const S = window.gsSite;
  const users = S.section("users", "Users");
  users.appendChild(S.el("p", "muted", "The whole period per user. Click a column's title to sort by it."));
  users.appendChild(siteTable("user-table", usageColumns("user"), d.users));
  const accounts = S.section("accounts", "Accounts");
  accounts.appendChild(siteTable("account-table", usageColumns("account"), d.accounts));
}

// The command that gives a job's full report, with a button that copies it.
function commandCell(text) {
  const S = window.gsSite;
  const box = S.el("span", "command");
  const code = S.el("code", null, text);
  const button = S.el("button", "copy", "copy");
  button.type = "button";
  button.title = "copy the command";
  const said = (word) => { button.textContent = word; setTimeout(() => (button.textContent = "copy"), 1500); };
  const fallback = () => {
    const range = document.createRange();
    range.selectNodeContents(code);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    let ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    said(ok ? "copied" : "selected: press Ctrl+C");
  };
  button.onclick = () => {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(() => said("copied"), fallback);
    } else {
      fallback();
    }
  };
  box.appendChild(code);
  box.appendChild(button);
  return box;
}

function topJobs(d) {
  const S = window.gsSite;
  const s = S.section("top-idle", "The jobs with the most idle GPU-hours");
  if (!d.top_idle.length) { s.appendChild(S.el("p", "note", "No job had idle GPU-hours.")); return; }
  const flags = (j) => {
    const box = S.el("span", "flags");
    j.flags.forEach((f) => box.appendChild(S.el("span", "flag flag-" + f, f)));
    return box;
  };
  const nameCell = (j) => {
    const e = S.el("span", null, j.name);
    e.title = j.name;  // the whole name, where the column cuts it
    return e;
  };
  const nodes = (j) => (j.nodes.length <= 2 ? j.nodes.join(", ")
    : j.nodes.slice(0, 2).join(", ") + " +" + (j.nodes.length - 2));
  // What decides first (idle hours, flags, the command), then the rest, so that a narrow
  // window scrolls sideways past the details only.
  const columns = [
    { title: "#", key: (j) => j.rank, cell: (j) => String(j.rank) },
    { title: "job", key: (j) => j.shown_id, cell: (j) => j.shown_id, cls: "text" },
    { title: "name", key: (j) => j.name, cell: nameCell, cls: "text job-name" },
    { title: "user", key: (j) => j.user, cell: (j) => j.user, cls: "text" },
    { title: "account", key: (j) => j.account, cell: (j) => j.account, cls: "text" },
    { title: "idle GPU-hours", key: (j) => j.idle_gpu_hours, cell: (j) => S.big(j.idle_gpu_hours, 1) },
    { title: "GPU-hours", key: (j) => j.gpu_hours, cell: (j) => S.big(j.gpu_hours, 1) },
    { title: "utilization %", key: (j) => j.util_pct, cell: (j) => S.fmt(j.util_pct, 1) },
    { title: "flags", key: (j) => j.flags.join(" "), cell: flags, cls: "text" },
    { title: "full report", key: (j) => j.command, cell: (j) => commandCell(j.command), cls: "text" },
    { title: "GPUs", key: (j) => j.gpus, cell: (j) => String(j.gpus) },
    { title: "nodes", key: (j) => j.nodes.length, cell: nodes, cls: "text" },
    { title: "state", key: (j) => j.state, cell: (j) => j.state, cls: "text" },
    { title: "energy kWh", key: (j) => j.energy_j, cell: (j) => S.fmt(S.kwh(j.energy_j), 2) },
  ];
  d.top_idle.forEach((j, i) => (j.rank = i + 1));
  s.appendChild(S.el("p", "muted", "Most idle GPU-hours first. Each job's command writes its " +
                     "full report; flags: idle (a GPU idle half the job or more), straggler, " +
                     "too-large (a smaller GPU or MIG slice would do), health (faults)."));
  s.appendChild(siteTable("top-idle-table", columns, d.top_idle));
}

function efficiency(d) {
  const S = window.gsSite, e = d.efficiency;
  const s = S.section("efficiency", "Efficiency distribution");
  s.appendChild(S.el("p", "muted", "GPU-hours and jobs per band of the job's mean GPU utilization."));
  const hours = e.gpu_hours.reduce((a, b) => a + b, 0), jobs = e.jobs.reduce((a, b) => a + b, 0);
  const bar = (value, whole, cls) => {
    const box = S.el("div", "band-bar");
    const fill = S.el("div", cls);
    fill.style.width = (whole > 0 ? (100 * value) / whole : 0).toFixed(2) + "%";
    box.appendChild(fill);
    return box;
  };
  const rows = e.gpu_hours.map((h, i) => ({ band: i, hours: h, jobs: e.jobs[i] }));
  const columns = [
    { title: "utilization", key: (r) => r.band, cls: "text",
      cell: (r) => r.band * 10 + "–" + (r.band * 10 + 10) + " %" },
    { title: "GPU-hours", key: (r) => r.hours, cell: (r) => S.big(r.hours, 1) },
    { title: "", key: (r) => r.hours, cell: (r) => bar(r.hours, hours, "fill-hours"), cls: "text" },
    { title: "share", key: (r) => r.hours, cell: (r) => S.share(r.hours, hours) },
    { title: "jobs", key: (r) => r.jobs, cell: (r) => S.fmt(r.jobs, 0) },
    { title: "", key: (r) => r.jobs, cell: (r) => bar(r.jobs, jobs, "fill-jobs"), cls: "text" },
  ];
  s.appendChild(siteTable("efficiency-table", columns, rows));
  if (e.jobs_unknown) {
    s.appendChild(S.el("p", "note", S.fmt(e.jobs_unknown, 0) + " jobs without a known utilization."));
  }
}

function heatmapSection(d, bytes) {
  const S = window.gsSite, h = d.heatmap;
  const s = S.section("heatmap", "Nodes × time");
  const legend = S.el("p", "muted");
  legend.appendChild(document.createTextNode(h.nodes.length + " nodes × " + h.bins +
    " bins; colour: the mean utilization of the node's GPUs while jobs held them, 0 % "));
  legend.appendChild(S.heatLegend());
  legend.appendChild(document.createTextNode(" 100 %; blank: no job held a GPU of the node."));
  s.appendChild(legend);
  const box = S.el("div", "heat-scroll");
  const canvas = S.el("canvas", "site-heatmap");
  canvas.id = "heatmap-canvas";
  const tip = S.el("div", "tooltip");
  box.appendChild(canvas);
  box.appendChild(tip);
  s.appendChild(box);
  if (!h.nodes.length || !h.bins) s.appendChild(S.el("p", "note", "No node was busy in this period."));
  return S.drawHeatmap(canvas, tip, h, bytes, Math.min(1240, document.getElementById("report").clientWidth - 10));
}

(async function () {
  const S = window.gsSite;
  const began = performance.now();
  let d, cells;
  try {
    d = JSON.parse(new TextDecoder().decode(await siteBytes("site-data")));
    cells = await siteBytes("site-heatmap");
  } catch (e) {
    document.getElementById("report").textContent = "gpuscope could not read this report's data: " + e.message;
    throw e;
  }
  S.data = d;
  S.cells = cells;
  const read = performance.now();
  document.getElementById("report").textContent = "";
  siteHeader(d);
  usageSection(d);
  usageTables(d);
  topJobs(d);
  efficiency(d);
  const heatMs = heatmapSection(d, cells);
  // readyMs: since the navigation began (the file opened), so it holds the HTML's parsing too.
  S.timings = { readMs: read - began, heatmapMs: heatMs, drawMs: performance.now() - read,
                readyMs: performance.now() };
  window.gpuscopeReady = true;
})();
