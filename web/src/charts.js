// gpuscope report: the drawn parts (timelines with uPlot, the heatmap and the load-balance chart
// on plain canvases). Loaded after uPlot and before report.js; everything hangs off `gs`.
"use strict";
var gs = window.gs || {};
window.gs = gs;

gs.colors = {
  accent: "#2f6fdf", band: "rgba(47,111,223,0.16)", warn: "#d1495b", event: "#e8871e",
  output: "rgba(122,134,154,0.55)", trimmed: "rgba(120,120,120,0.10)", missing: "#e4e7eb",
  gpuLines: ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"],
};

// Seconds as 12.5 s, 4:05 or 1:02:03.
gs.fmtTime = function (s) {
  if (s == null || !isFinite(s)) return "";
  if (Math.abs(s) < 60) return (Math.round(s * 10) / 10) + " s";
  const sign = s < 0 ? "-" : "";
  s = Math.abs(Math.round(s));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const mm = h > 0 ? String(m).padStart(2, "0") : String(m);
  return sign + (h > 0 ? h + ":" : "") + mm + ":" + String(sec).padStart(2, "0");
};

// The shared x range of every timeline, so zooming one zooms all.
gs.view = { min: null, max: null, full: [0, 1], charts: [] };
gs.setView = function (min, max) {
  const [lo, hi] = gs.view.full;
  const span = Math.max(max - min, (hi - lo) / 5000);
  min = Math.max(lo, Math.min(min, hi - span));
  max = Math.min(hi, min + span);
  gs.view.min = min;
  gs.view.max = max;
  for (const u of gs.view.charts) u.setScale("x", { min, max });
};

function wheelZoom(u) {
  u.over.addEventListener("wheel", function (e) {
    e.preventDefault();
    const rect = u.over.getBoundingClientRect();
    const frac = Math.min(1, Math.max(0, (e.clientX - rect.left) / rect.width));
    const min = u.scales.x.min, max = u.scales.x.max;
    const at = min + frac * (max - min);
    const range = (max - min) * (e.deltaY < 0 ? 0.8 : 1.25);
    gs.setView(at - frac * range, at - frac * range + range);
  }, { passive: false });
}

function drawShading(u) {
  const w = gs.data.window, ctx = u.ctx, b = u.bbox;
  ctx.save();
  ctx.fillStyle = gs.colors.trimmed;
  const x0 = u.valToPos(w.start_s, "x", true), x1 = u.valToPos(w.end_s, "x", true);
  if (x0 > b.left) ctx.fillRect(b.left, b.top, Math.min(x0, b.left + b.width) - b.left, b.height);
  if (x1 < b.left + b.width) {
    const from = Math.max(x1, b.left);
    ctx.fillRect(from, b.top, b.left + b.width - from, b.height);
  }
  ctx.restore();
}

function drawMarks(u) {
  const ctx = u.ctx, b = u.bbox, marks = gs.visibleMarks();
  ctx.save();
  ctx.lineWidth = Math.max(1, devicePixelRatio);
  for (const m of marks) {
    const x = Math.round(u.valToPos(m.t_s, "x", true));
    if (x < b.left || x > b.left + b.width) continue;
    ctx.strokeStyle = gs.isOutput(m) ? gs.colors.output : gs.colors.event;
    ctx.beginPath();
    ctx.moveTo(x, b.top);
    ctx.lineTo(x, b.top + b.height);
    ctx.stroke();
  }
  ctx.restore();
}

// Tooltip with the marks under the cursor.
function markTooltip(u, tip) {
  const left = u.cursor.left;
  if (left == null || left < 0) { tip.style.display = "none"; return; }
  const near = [];
  for (const m of gs.visibleMarks()) {
    const x = u.valToPos(m.t_s, "x");
    if (Math.abs(x - left) <= 3) near.push(m);
    if (near.length >= 6) break;
  }
  if (!near.length) { tip.style.display = "none"; return; }
  tip.textContent = near.map((m) => gs.fmtTime(m.t_s) + " " + m.kind + (m.where ? " [" + m.where + "]" : "") +
    (m.text ? ": " + m.text.slice(0, 100) : "")).join("\n");
  tip.style.whiteSpace = "pre";
  tip.style.display = "block";
  tip.style.left = (u.over.offsetLeft + left + 12) + "px";
  tip.style.top = (u.over.offsetTop + 4) + "px";
}

// One metric's timeline: mean line with a min–max band over GPUs, optional per-GPU lines.
gs.timeline = function (parent, metric, gpuIndices, width) {
  const d = gs.data, os = d.over_space[metric], conv = gs.unitOf(metric);
  const box = gs.el("div", "chart");
  box.dataset.metric = metric;
  box.appendChild(gs.el("div", "chart-title", metric + " (" + conv.unit + ")"));
  const note = gs.el("div", "chart-note", d.metrics[metric] ? d.metrics[metric].description : "");
  box.appendChild(note);
  parent.appendChild(box);
  const f = conv.f;
  const tables = [[os.t_s, os.mean.map(f), os.min.map(f), os.max.map(f)]];
  const series = [
    { label: "time", value: (u, v) => gs.fmtTime(v) },
    { label: "mean", stroke: gs.colors.accent, width: 1.5, spanGaps: true },
    { label: "min", stroke: "rgba(47,111,223,0.35)", width: 0.5, spanGaps: true },
    { label: "max", stroke: "rgba(47,111,223,0.35)", width: 0.5, spanGaps: true },
  ];
  const missing = [], parentOnly = [];
  const grid = d.gpu_grid && d.gpu_grid.metrics ? d.gpu_grid.metrics[metric] : null;
  if (gpuIndices.length && !grid) {
    note.textContent += " · per-GPU lines are kept for " + gs.gridMetrics().join(", ") + " only";
  }
  if (gpuIndices.length && grid && d.gpu_grid.rows) {
    note.textContent += " · per-GPU lines in " + gs.fmtTime(d.gpu_grid.bin_s) + " bins (" + d.gpus.length + " GPUs)";
  }
  gpuIndices.forEach((g, k) => {
    if (!grid) return;
    if (!grid.gpus_with_data[g]) { (d.gpus[g].mig ? parentOnly : missing).push(gs.gpuLabel(g)); return; }
    const ys = gs.gridSeries(metric, g).map((v) => (v == null ? null : f(v)));
    tables.push([gs.gridTimes(), ys]);
    series.push({ label: gs.gpuLabel(g), stroke: gs.colors.gpuLines[k % gs.colors.gpuLines.length],
                  width: 1, spanGaps: false });
  });
  if (missing.length) {
    box.appendChild(gs.el("div", "chart-note unsupported", missing.join(", ") + ": " + metric +
      " not supported on this GPU"));
  }
  if (parentOnly.length) {
    box.appendChild(gs.el("div", "chart-note unsupported", parentOnly.join(", ") + ": no " + metric +
      " of its own (a MIG instance; its parent GPU's lane has what is measured)"));
  }
  const data = tables.length > 1 ? uPlot.join(tables) : tables[0];
  const tip = gs.el("div", "tooltip");
  const opts = {
    width: width, height: 200,
    scales: { x: { time: false } },
    series: series,
    bands: [{ series: [3, 2], fill: gs.colors.band }],
    axes: [
      { values: (u, splits) => splits.map(gs.fmtTime), size: 30 },
      { label: conv.unit, size: 60, labelSize: 16 },
    ],
    // uPlot does not zoom by itself: a drag selection or the wheel sets the shared view.
    cursor: { sync: { key: "gpuscope" }, drag: { x: true, y: false, setScale: false } },
    legend: { live: true },
    hooks: {
      drawClear: [drawShading],
      draw: [drawMarks],
      setCursor: [(u) => markTooltip(u, tip)],
      setSelect: [(u) => {
        if (u.select.width < 2) return;
        const min = u.posToVal(u.select.left, "x"), max = u.posToVal(u.select.left + u.select.width, "x");
        u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
        gs.setView(min, max);
      }],
    },
  };
  const u = new uPlot(opts, data, box);
  wheelZoom(u);
  u.over.addEventListener("dblclick", () => gs.setView(gs.view.full[0], gs.view.full[1]));
  box.appendChild(tip);
  if (gs.view.min != null) u.setScale("x", { min: gs.view.min, max: gs.view.max });
  gs.view.charts.push(u);
  return u;
};

// Power (mean over GPUs) with the grid's carbon intensity as a step line on its own axis, from
// the analysis' carbon periods; shares the timelines' zoom.
gs.intensityTimeline = function (parent, width) {
  const d = gs.data, os = d.over_space.power_w, periods = d.carbon.intervals;
  const box = gs.el("div", "chart");
  box.id = "intensity-chart";
  box.appendChild(gs.el("div", "chart-title", "power (W, mean over GPUs) and grid intensity (gCO2e/kWh)"));
  parent.appendChild(box);
  const at = (ns) => ns / 1e9 - d.t0_unix_s;
  // The intensity as steps: each period's value at its start, and once more at its end.
  const it = [], iv = [];
  for (const p of periods) {
    it.push(at(p.start_wall_ns), at(p.end_wall_ns));
    iv.push(p.g_per_kwh, p.g_per_kwh);
  }
  const tables = [[it, iv]];
  if (os) tables.unshift([os.t_s, os.mean]);
  const data = tables.length > 1 ? uPlot.join(tables) : tables[0];
  const series = [{ label: "time", value: (u, v) => gs.fmtTime(v) }];
  if (os) series.push({ label: "power W", stroke: gs.colors.accent, width: 1.5, spanGaps: true, scale: "W" });
  series.push({ label: "gCO2e/kWh", stroke: "#2a9d4b", width: 2, spanGaps: true, scale: "g",
                paths: uPlot.paths.stepped({ align: 1 }) });
  const u = new uPlot({
    width: width, height: 180,
    scales: { x: { time: false }, W: {}, g: {} },
    series: series,
    axes: [
      { values: (u, splits) => splits.map(gs.fmtTime), size: 30 },
      { scale: "W", label: "W", size: 60, labelSize: 16 },
      { scale: "g", label: "gCO2e/kWh", side: 1, size: 60, labelSize: 16, grid: { show: false } },
    ],
    cursor: { sync: { key: "gpuscope" }, drag: { x: true, y: false, setScale: false } },
    legend: { live: true },
    hooks: { setSelect: [(u) => {
      if (u.select.width < 2) return;
      const min = u.posToVal(u.select.left, "x"), max = u.posToVal(u.select.left + u.select.width, "x");
      u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
      gs.setView(min, max);
    }] },
  }, data, box);
  wheelZoom(u);
  u.over.addEventListener("dblclick", () => gs.setView(gs.view.full[0], gs.view.full[1]));
  if (gs.view.min != null) u.setScale("x", { min: gs.view.min, max: gs.view.max });
  gs.view.charts.push(u);
  return u;
};

// A 256-colour ramp (viridis-like) for the heatmap.
gs.ramp = (function () {
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const out = [];
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * (stops.length - 1), k = Math.min(stops.length - 2, Math.floor(x)), t = x - k;
    out.push(stops[k].map((c, j) => Math.round(c + t * (stops[k + 1][j] - c))));
  }
  return out;
})();

// GPU × time heatmap of one grid metric, drawn pixel by pixel and scaled up without smoothing. A
// big run's rows are groups of consecutive GPUs (d.gpu_grid.rows), each the mean of its GPUs.
gs.heatmap = function (canvas, metric, tip) {
  const d = gs.data, rows = d.gpu_grid.rows, source = rows || d.gpu_grid, grid = source.metrics[metric];
  const bins = source.bins, n = rows ? rows.count : d.gpus.length, gpus = d.gpus.length;
  const bytes = gs.gridBytes(metric, source);
  const rowLabel = (r) => {
    if (!rows) return gs.gpuLabel(r);
    const first = r * rows.gpus_per_row, last = Math.min(gpus, first + rows.gpus_per_row) - 1;
    return gs.gpuLabel(first) + " – " + gs.gpuLabel(last) + " (mean of " + (last - first + 1) + " GPUs)";
  };
  const image = new ImageData(bins, n);
  const px = image.data;
  for (let i = 0; i < n * bins; i++) {
    const b = bytes[i], o = i * 4;
    const c = b === 255 ? [228, 231, 235] : gs.ramp[Math.round((b / 254) * 255)];
    px[o] = c[0]; px[o + 1] = c[1]; px[o + 2] = c[2]; px[o + 3] = 255;
  }
  const gutter = 8, width = canvas.width, height = canvas.height;
  const off = document.createElement("canvas");
  off.width = bins;
  off.height = n;
  off.getContext("2d").putImageData(image, 0, 0);
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, width, height);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, gutter, 0, width - gutter, height);
  const stragglers = gs.stragglers();
  ctx.fillStyle = gs.colors.warn;
  for (const g of stragglers) {
    ctx.fillRect(0, Math.floor((g / gpus) * height), gutter - 2, Math.max(2, Math.ceil(height / n)));
  }
  canvas.onmousemove = function (e) {
    const r = canvas.getBoundingClientRect();
    const x = ((e.clientX - r.left) / r.width) * width - gutter, y = ((e.clientY - r.top) / r.height) * height;
    if (x < 0) { tip.style.display = "none"; return; }
    const bin = Math.min(bins - 1, Math.floor((x / (width - gutter)) * bins));
    const g = Math.min(n - 1, Math.floor((y / height) * n));
    const b = bytes[g * bins + bin], conv = gs.unitOf(metric);
    const v = b === 255 ? "no sample" : gs.num(conv.f(grid.lo + (b / 254) * (grid.hi - grid.lo))) + " " + conv.unit;
    tip.textContent = rowLabel(g) + " · " + gs.fmtTime(bin * source.bin_s) + " · " + v;
    tip.style.display = "block";
    tip.style.left = (canvas.offsetLeft + e.offsetX + 12) + "px";
    tip.style.top = (canvas.offsetTop + e.offsetY + 12) + "px";
  };
  canvas.onmouseleave = () => (tip.style.display = "none");
};

// Per-GPU time-averaged activity with its p5–p95 spread; stragglers in red, the median dashed.
gs.balanceChart = function (canvas, tip) {
  const d = gs.data, n = d.gpus.length, w = canvas.width, h = canvas.height;
  const ctx = canvas.getContext("2d"), left = 40, bottom = 18, top = 8;
  const plotW = w - left - 8, plotH = h - top - bottom;
  const y = (pct) => top + plotH * (1 - Math.min(100, Math.max(0, pct)) / 100);
  const stragglers = gs.stragglers();
  ctx.clearRect(0, 0, w, h);
  ctx.font = "11px sans-serif";
  ctx.fillStyle = "#5f6b7a";
  ctx.strokeStyle = "#d9dee5";
  for (const p of [0, 25, 50, 75, 100]) {
    ctx.beginPath(); ctx.moveTo(left, y(p)); ctx.lineTo(left + plotW, y(p)); ctx.stroke();
    ctx.fillText(p + " %", 4, y(p) + 4);
  }
  const slot = plotW / n, barW = Math.max(1, slot * 0.7);
  d.gpus.forEach((g, i) => {
    const x = left + i * slot + (slot - barW) / 2;
    if (g.activity == null) return;
    ctx.fillStyle = stragglers.has(i) ? gs.colors.warn : gs.colors.accent;
    ctx.fillRect(x, y(g.activity * 100), barW, y(0) - y(g.activity * 100));
    const s = g.over_time[g.activity_metric];
    if (s && s.p5 != null && slot >= 4) {
      ctx.strokeStyle = "#1d232b";
      const cx = x + barW / 2;
      ctx.beginPath(); ctx.moveTo(cx, y(s.p5)); ctx.lineTo(cx, y(s.p95));
      ctx.moveTo(cx - barW / 4, y(s.p5)); ctx.lineTo(cx + barW / 4, y(s.p5));
      ctx.moveTo(cx - barW / 4, y(s.p95)); ctx.lineTo(cx + barW / 4, y(s.p95));
      ctx.stroke();
    }
  });
  if (d.balance) {  // the GPUs' median (MIG instances have their own, in the text below)
    ctx.strokeStyle = "#1d232b";
    ctx.setLineDash([5, 4]);
    ctx.beginPath(); ctx.moveTo(left, y(d.balance.median * 100)); ctx.lineTo(left + plotW, y(d.balance.median * 100));
    ctx.stroke();
    ctx.setLineDash([]);
  }
  if (n <= 64) {
    ctx.fillStyle = "#5f6b7a";
    d.gpus.forEach((g, i) => ctx.fillText(g.mig ? g.mig.parent_index + "/" + g.mig.gpu_instance_id : String(g.index),
      left + i * slot + slot / 2 - 3, h - 4));
  }
  canvas.onmousemove = function (e) {
    const r = canvas.getBoundingClientRect();
    const i = Math.floor((((e.clientX - r.left) / r.width) * w - left) / slot);
    if (i < 0 || i >= n) { tip.style.display = "none"; return; }
    const g = d.gpus[i], s = g.over_time[g.activity_metric];
    tip.textContent = gs.gpuLabel(i) + ": " + (g.activity == null ? "no activity data" : gs.num(g.activity * 100) + " %") +
      (s && s.p5 != null ? " (p5 " + gs.num(s.p5) + " – p95 " + gs.num(s.p95) + " %)" : "") +
      (stragglers.has(i) ? " · straggler" : "");
    tip.style.display = "block";
    tip.style.left = (canvas.offsetLeft + e.offsetX + 12) + "px";
    tip.style.top = (canvas.offsetTop + e.offsetY + 12) + "px";
  };
  canvas.onmouseleave = () => (tip.style.display = "none");
};

// A lane chart under or over the timelines (kernels.js, phases.js): a uPlot of fixed `height` in
// `box` whose x axis follows the shared view (drag or wheel to zoom, double-click to reset),
// drawn by `draw(u)`, with `hover(u)` for its tooltip `tip`, joining gs.view.charts.
gs.laneChart = function (box, opts, height, tip, draw, hover) {
  opts.legend = { show: false };
  opts.cursor = { sync: { key: "gpuscope" }, drag: { x: true, y: false, setScale: false },
                  points: { show: false }, y: false };
  opts.hooks = {
    draw: [draw],
    setCursor: [hover],
    setSelect: [(u) => {
      if (u.select.width < 2) return;
      const min = u.posToVal(u.select.left, "x"), max = u.posToVal(u.select.left + u.select.width, "x");
      u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
      gs.setView(min, max);
    }],
  };
  const u = new uPlot(opts, [[gs.view.full[0], gs.view.full[1]], [null, null]], box);
  wheelZoom(u);
  // The timelines resize every chart to their height; a lane keeps its own.
  const setSize = u.setSize;
  u.setSize = (size) => setSize({ width: size.width, height: height });
  u.over.addEventListener("dblclick", () => gs.setView(gs.view.full[0], gs.view.full[1]));
  u.over.addEventListener("mouseleave", () => (tip.style.display = "none"));
  box.appendChild(tip);
  if (gs.view.min != null) u.setScale("x", { min: gs.view.min, max: gs.view.max });
  gs.view.charts.push(u);
  return u;
};
