// gpuscope report: the phase lane above the timelines (docs/phases.md, "In the report"). One uPlot
// chart sharing the timelines' x axis (it joins gs.view.charts, so zoom and pan apply to it); a
// row per nesting depth, each phase a slice coloured by its name and labelled when wide enough;
// hover for its name, time, energy, power and saturation. Loaded after charts.js.
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
    const rows = Math.min(6, 1 + p.depth.reduce((m, v) => Math.max(m, v), 0));
    let maxDuration = 0;
    for (let j = 0; j < count; j++) maxDuration = Math.max(maxDuration, p.end_s[j] - p.start_s[j]);
    const box = gs.el("div", "chart phases");
    box.id = "phase-lane";
    box.appendChild(gs.el("div", "chart-title", "Phases (" + p.total.toLocaleString("en-US") + ")"));
    let note = "Each slice is a phase, nested ones below; hover for its energy, power and saturation.";
    if (p.total > p.shown) {
      note += " The first " + p.shown.toLocaleString("en-US") + " of " + p.total.toLocaleString("en-US") +
        " are drawn (gpuscope analyze --csv --aggregate phases, and the Perfetto export, have them all).";
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

    function draw(u) {
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

    function hover(u) {
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
