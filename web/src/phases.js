// gpuscope report: the phase lane above the timelines (docs/phases.md, "In the report"). One uPlot
// chart sharing the timelines' x axis (it joins gs.view.charts, so zoom and pan apply to it); a
// row per nesting depth, each phase a slice coloured by its name and labelled when wide enough;
// hover for its name, time, energy, power and saturation. Past the instances the analysis lists
// one by one (10 000), each row is 2000 time bins shaded by the phase time in them, as the kernel
// lanes are. Loaded after charts.js.
"use strict";
(function () {
  const gs = window.gs;

  // A stable colour per phase name (golden-angle hues, offset from the kernels').
  const nameColor = (i, alpha) => "hsla(" + ((i * 137.508 + 40) % 360).toFixed(1) + ",55%,55%," + alpha + ")";

  // Returns the chart (also gs.phaseChart), or null when the runs have no phases.
  gs.phaseLanes = function (parent, width) {
    const p = gs.data.phase_lane;
    if (!p || !p.start_s || !p.start_s.length) return null;
    const count = p.start_s.length;
    const binned = p.mode === "bins" && p.bins;
    const rows = binned ? p.bins.rows.length : Math.min(6, 1 + p.depth.reduce((m, v) => Math.max(m, v), 0));
    let maxDuration = 0;
    for (let j = 0; j < count; j++) maxDuration = Math.max(maxDuration, p.end_s[j] - p.start_s[j]);
    const box = gs.el("div", "chart phases");
    box.id = "phase-lane";
    box.appendChild(gs.el("div", "chart-title", "Phases (" + p.total.toLocaleString("en-US") + ")"));
    let note = "Each slice is a phase, nested ones below; hover for its energy, power and saturation.";
    if (binned) {
      note = "More phases than the report draws one by one: each row (a nesting depth) is " + p.bins.bins +
        " time bins shaded by the phase time in them; hover for the phases started in a bin and the longest " +
        "(gpuscope export --perfetto has every phase).";
    }
    const noteEl = gs.el("div", "chart-note", note);
    noteEl.id = "phase-note";
    box.appendChild(noteEl);
    parent.appendChild(box);
    const rowH = 18;
    const height = rows * rowH + 40;
    const tip = gs.el("div", "tooltip");
    // Slices in start order (the analysis lists them so): a binary search finds the first in view.
    const firstFrom = function (t) {
      let lo = 0, hi = count;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (p.start_s[mid] < t) lo = mid + 1; else hi = mid; }
      return lo;
    };

    function drawBins(u) {
      const ctx = u.ctx, b = u.bbox, B = p.bins, xmin = u.scales.x.min, xmax = u.scales.x.max;
      ctx.save();
      ctx.beginPath();
      ctx.rect(b.left, b.top, b.width, b.height);
      ctx.clip();
      const first = Math.max(0, Math.floor(xmin / B.bin_s)), last = Math.min(B.bins - 1, Math.ceil(xmax / B.bin_s));
      B.rows.forEach((row, r) => {
        const y0 = u.valToPos(rows - r, "y", true), y1 = u.valToPos(rows - r - 1, "y", true);
        for (let j = first; j <= last; j++) {
          if (!row.busy_s[j] && !row.started[j]) continue;
          const x0 = u.valToPos(j * B.bin_s, "x", true), x1 = u.valToPos((j + 1) * B.bin_s, "x", true);
          const busy = Math.min(1, row.busy_s[j] / B.bin_s);
          ctx.fillStyle = "rgba(200,120,40," + (0.15 + 0.85 * busy).toFixed(3) + ")";
          ctx.fillRect(x0, y0 + devicePixelRatio, Math.max(devicePixelRatio, x1 - x0), y1 - y0 - 2 * devicePixelRatio);
        }
      });
      ctx.restore();
    }

    function draw(u) {
      if (binned) return drawBins(u);
      const ctx = u.ctx, b = u.bbox, xmin = u.scales.x.min, xmax = u.scales.x.max;
      ctx.save();
      ctx.beginPath();
      ctx.rect(b.left, b.top, b.width, b.height);
      ctx.clip();
      ctx.font = (11 * devicePixelRatio) + "px sans-serif";
      ctx.textBaseline = "middle";
      ctx.textAlign = "left";  // uPlot leaves the axes' alignment set
      for (let j = firstFrom(xmin - maxDuration); j < count && p.start_s[j] <= xmax; j++) {
        const row = Math.min(rows - 1, p.depth[j]);
        const y0 = u.valToPos(rows - row, "y", true), y1 = u.valToPos(rows - row - 1, "y", true);
        const x0 = u.valToPos(p.start_s[j], "x", true), x1 = u.valToPos(p.end_s[j], "x", true);
        const w = Math.max(devicePixelRatio, x1 - x0), h = y1 - y0 - 2 * devicePixelRatio;
        ctx.fillStyle = nameColor(p.name[j], p.closed[j] ? 0.85 : 0.4);
        ctx.fillRect(x0, y0 + devicePixelRatio, w, h);
        const label = p.names[p.name[j]] + (p.instance[j] ? " " + p.instance[j] : "");
        if (w > 40 * devicePixelRatio) {
          ctx.fillStyle = "#111";
          ctx.save();
          ctx.beginPath();
          ctx.rect(x0, y0, w, y1 - y0);
          ctx.clip();
          ctx.fillText(label, Math.max(x0, b.left) + 3 * devicePixelRatio, (y0 + y1) / 2);
          ctx.restore();
        }
      }
      ctx.restore();
    }

    // The innermost phase under the pointer: its index, or -1.
    gs.phaseAt = function (u, left, top) {
      if (left == null || left < 0 || top == null || top < 0) return -1;
      const row = rows - 1 - Math.floor(u.posToVal(top, "y"));
      const t = u.posToVal(left, "x"), slack = u.posToVal(left + 2, "x") - t;
      let best = -1;
      for (let j = firstFrom(t - maxDuration - slack); j < count && p.start_s[j] <= t + slack; j++) {
        if (Math.min(rows - 1, p.depth[j]) !== row) continue;
        if (p.start_s[j] - slack <= t && t <= p.end_s[j] + slack) best = j;
      }
      return best;
    };
    gs.phaseText = function (j) {
      const v = (x, unit, digits) => (x == null ? "n/a" : gs.num(x, digits) + unit);
      return p.names[p.name[j]] + (p.instance[j] ? " " + p.instance[j] : "") + (p.closed[j] ? "" : " (never ended)") +
        "\n" + gs.fmtTime(p.start_s[j]) + " – " + gs.fmtTime(p.end_s[j]) + " (" + gs.fmtTime(p.end_s[j] - p.start_s[j]) + ")" +
        "\nenergy " + v(p.energy_j[j], " J", 0) + " · power " + v(p.power_w[j], " W", 0) +
        "\nSM active " + v(p.sm_active_pct[j], " %", 0) + " · tensor " + v(p.tensor_active_pct[j], " %", 0);
    };

    // In bins mode: what a bin of a row holds, or "".
    gs.phaseBinText = function (u, left, top) {
      if (!binned || left == null || left < 0 || top == null || top < 0) return "";
      const B = p.bins, r = rows - 1 - Math.floor(u.posToVal(top, "y")), j = Math.floor(u.posToVal(left, "x") / B.bin_s);
      if (r < 0 || r >= rows || j < 0 || j >= B.bins) return "";
      const row = B.rows[r];
      if (!row.busy_s[j] && !row.started[j]) return "";
      const decimals = Math.min(6, Math.max(1, Math.ceil(-Math.log10(B.bin_s)) + 1));
      const at = (s) => (B.bin_s >= 1 ? gs.fmtTime(s) : s.toFixed(decimals) + " s");
      const span = (s) => gs.fmtNs(s * 1e9);  // kernels.js
      return "depth " + r + " · " + at(j * B.bin_s) + " – " + at((j + 1) * B.bin_s) + "\n" +
        row.started[j] + " phases started, phase time " + span(row.busy_s[j]) + " (" +
        Math.round((100 * row.busy_s[j]) / B.bin_s) + " % of the bin)" +
        (row.longest_name[j] >= 0 ? "\nlongest: " + B.names[row.longest_name[j]] + " (" + span(row.longest_s[j]) + ")" : "");
    };

    function hover(u) {
      if (binned) {
        const text = gs.phaseBinText(u, u.cursor.left, u.cursor.top);
        tip.textContent = text;
        tip.style.whiteSpace = "pre";
        tip.style.display = text ? "block" : "none";
        tip.style.left = (u.over.offsetLeft + u.cursor.left + 12) + "px";
        tip.style.top = (u.over.offsetTop + u.cursor.top + 12) + "px";
        return;
      }
      const j = gs.phaseAt(u, u.cursor.left, u.cursor.top);
      if (j < 0) { tip.style.display = "none"; return; }
      tip.textContent = gs.phaseText(j);
      tip.style.whiteSpace = "pre";
      tip.style.display = "block";
      tip.style.left = (u.over.offsetLeft + u.cursor.left + 12) + "px";
      tip.style.top = (u.over.offsetTop + u.cursor.top + 12) + "px";
    }

    const opts = {
      width: width, height: height,
      scales: { x: { time: false }, y: { range: [0, rows] } },
      series: [{ label: "time", value: (u, v) => gs.fmtTime(v) }, { label: "phases", stroke: "transparent" }],
      axes: [
        { values: (u, splits) => splits.map(gs.fmtTime), size: 30 },
        { size: 60, grid: { show: false }, ticks: { show: false },
          splits: () => Array.from({ length: rows }, (_, i) => rows - i - 0.5),
          values: (u, splits) => splits.map((v) => (Math.floor(v) === rows - 1 ? "phases" : "")) },
      ],
    };
    const u = gs.laneChart(box, opts, height, tip, draw, hover);
    gs.phaseChart = u;
    return u;
  };
})();
