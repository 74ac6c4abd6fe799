// gpuscope report: the kernel lanes under the timelines (profile --trace-kernels; docs/report.md,
// "Kernels"). One uPlot chart sharing the timelines' x axis (it joins gs.view.charts, so zoom and
// pan apply to it too); each GPU is a lane of kernel slices, or, past 50 000 kernels, of time
// bins shaded by the kernel time in them. Loaded after charts.js and before report.js.
"use strict";
(function () {
  const gs = window.gs;

  // Nanoseconds for people: 850 ns, 12.3 µs, 4.56 ms, 1.23 s.
  gs.fmtNs = function (ns) {
    const a = Math.abs(ns);
    if (a < 1e3) return Math.round(ns) + " ns";
    if (a < 1e6) return (ns / 1e3).toPrecision(3) + " µs";
    if (a < 1e9) return (ns / 1e6).toPrecision(3) + " ms";
    return (ns / 1e9).toPrecision(3) + " s";
  };

  // Seconds with as many decimals as `resolution_s` needs (0.030757 s), or gs.fmtTime past a minute.
  const preciseTime = function (s, resolution_s) {
    if (Math.abs(s) >= 60) return gs.fmtTime(s);
    const decimals = Math.min(9, Math.max(1, Math.ceil(-Math.log10(resolution_s)) + 1));
    return s.toFixed(decimals) + " s";
  };

  // A stable colour per kernel name (golden-angle hues).
  const nameColor = (i) => "hsl(" + ((i * 137.508) % 360).toFixed(1) + ",58%,48%)";

  // The first index of the sorted array `a` whose value is >= x.
  function lowerBound(a, x) {
    let lo = 0, hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // Returns the chart (also gs.kernelChart), or null when the report has no kernels.
  gs.kernelLanes = function (parent, width) {
    const d = gs.data, k = d.kernels;
    if (!k || !k.lanes || !k.lanes.length) return null;
    const n = k.lanes.length;
    for (const lane of k.lanes) {
      if (k.mode !== "slices") continue;
      lane.maxDuration = lane.duration_ns.reduce((m, v) => Math.max(m, v), 0);
    }
    const box = gs.el("div", "chart kernels");
    box.id = "kernel-lanes";
    box.appendChild(gs.el("div", "chart-title", "Kernels (" + k.total.toLocaleString("en-US") + ")"));
    let note = k.mode === "bins" ? k.note
      : "Each slice is a kernel, coloured by name; hover for its name and duration.";
    if (k.unsampled) note += " " + k.unsampled + " kernels ran on GPUs gpuscope did not sample and are not drawn.";
    const noteEl = gs.el("div", "chart-note", note);
    noteEl.id = "kernel-note";
    box.appendChild(noteEl);
    parent.appendChild(box);

    const laneH = Math.max(4, Math.min(18, Math.floor(360 / n)));
    const height = n * laneH + 40;
    const labelEvery = Math.max(1, Math.ceil(12 / laneH));
    const tip = gs.el("div", "tooltip");

    function drawLanes(u) {
      const ctx = u.ctx, b = u.bbox;
      const xmin = u.scales.x.min, xmax = u.scales.x.max;
      ctx.save();
      ctx.beginPath();
      ctx.rect(b.left, b.top, b.width, b.height);
      ctx.clip();
      k.lanes.forEach((lane, i) => {
        const y0 = u.valToPos(n - i, "y", true), y1 = u.valToPos(n - i - 1, "y", true);
        const h = Math.max(1, y1 - y0 - Math.min(2, laneH / 4) * devicePixelRatio);
        if (i % 2 === 1) { ctx.fillStyle = "rgba(0,0,0,0.03)"; ctx.fillRect(b.left, y0, b.width, y1 - y0); }
        if (k.mode === "slices") {
          const from = lowerBound(lane.start_ns, xmin * 1e9 - lane.maxDuration);
          for (let j = from; j < lane.start_ns.length; j++) {
            const s = lane.start_ns[j];
            if (s > xmax * 1e9) break;
            const x0 = u.valToPos(s / 1e9, "x", true), x1 = u.valToPos((s + lane.duration_ns[j]) / 1e9, "x", true);
            ctx.fillStyle = nameColor(lane.name[j]);
            ctx.fillRect(x0, y0, Math.max(devicePixelRatio, x1 - x0), h);
          }
        } else {
          const binNs = k.bin_s * 1e9;
          const first = Math.max(0, Math.floor(xmin / k.bin_s)), last = Math.min(k.bins - 1, Math.ceil(xmax / k.bin_s));
          for (let j = first; j <= last; j++) {
            if (!lane.count[j] && !lane.busy_ns[j]) continue;
            const x0 = u.valToPos(j * k.bin_s, "x", true), x1 = u.valToPos((j + 1) * k.bin_s, "x", true);
            const busy = Math.min(1, lane.busy_ns[j] / binNs);
            ctx.fillStyle = "rgba(47,111,223," + (0.15 + 0.85 * busy).toFixed(3) + ")";
            ctx.fillRect(x0, y0, Math.max(devicePixelRatio, x1 - x0), h);
          }
        }
      });
      ctx.restore();
    }

    // What is under the pointer: { lane, text } or null.
    gs.kernelAt = function (u, left, top) {
      if (left == null || left < 0 || top == null || top < 0) return null;
      const i = n - 1 - Math.floor(u.posToVal(top, "y"));
      if (i < 0 || i >= n) return null;
      const lane = k.lanes[i], t = u.posToVal(left, "x");
      const who = gs.gpuLabel(lane.gpu);
      if (k.mode === "slices") {
        const slack = (u.posToVal(left + 3, "x") - t) * 1e9;  // 3 px
        const tn = t * 1e9;
        let best = -1, bestDistance = Infinity;
        for (let j = Math.min(lane.start_ns.length - 1, lowerBound(lane.start_ns, tn + slack)); j >= 0; j--) {
          const s = lane.start_ns[j], e = s + lane.duration_ns[j];
          if (e < tn - slack - lane.maxDuration) break;
          const distance = tn < s ? s - tn : tn > e ? tn - e : 0;
          if (distance <= slack && distance < bestDistance) { best = j; bestDistance = distance; }
          if (distance === 0) break;
        }
        if (best < 0) return null;
        return { lane: i, text: who + "\n" + k.names[lane.name[best]] + "\n" + gs.fmtNs(lane.duration_ns[best]) +
          " at " + preciseTime(lane.start_ns[best] / 1e9, 1e-6) };
      }
      const j = Math.floor(t / k.bin_s);
      if (j < 0 || j >= k.bins || (!lane.count[j] && !lane.busy_ns[j])) return null;
      return { lane: i, text: who + " · " + preciseTime(j * k.bin_s, k.bin_s) + " – " +
        preciseTime((j + 1) * k.bin_s, k.bin_s) + "\n" +
        lane.count[j] + " kernels started, kernel time " + gs.fmtNs(lane.busy_ns[j]) + " (" +
        Math.round((100 * lane.busy_ns[j]) / (k.bin_s * 1e9)) + " % of the bin)" +
        (lane.count[j] ? "\nlongest: " + k.names[lane.longest_name[j]] + " (" + gs.fmtNs(lane.longest_ns[j]) + ")" : "") };
    };

    function hover(u) {
      const hit = gs.kernelAt(u, u.cursor.left, u.cursor.top);
      if (!hit) { tip.style.display = "none"; return; }
      tip.textContent = hit.text.length > 400 ? hit.text.slice(0, 400) + "…" : hit.text;
      tip.style.whiteSpace = "pre";
      tip.style.display = "block";
      tip.style.left = (u.over.offsetLeft + u.cursor.left + 12) + "px";
      tip.style.top = (u.over.offsetTop + u.cursor.top + 12) + "px";
    }

    const opts = {
      width: width, height: height,
      scales: { x: { time: false }, y: { range: [0, n] } },
      series: [{ label: "time", value: (u, v) => gs.fmtTime(v) }, { label: "kernels", stroke: "transparent" }],
      axes: [
        { values: (u, splits) => splits.map(gs.fmtTime), size: 30 },
        { size: 60, grid: { show: false }, ticks: { show: false },
          splits: () => k.lanes.map((_, i) => n - i - 0.5).filter((_, i) => i % labelEvery === 0),
          values: (u, splits) => splits.map((v) => {
            const lane = k.lanes[n - 1 - Math.floor(v)];
            return lane ? "GPU " + d.gpus[lane.gpu].index : "";
          }) },
      ],
    };
    const u = gs.laneChart(box, opts, height, tip, drawLanes, hover);
    gs.kernelChart = u;
    return u;
  };
})();
