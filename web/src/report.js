// gpuscope report: reads the embedded data (#gpuscope-data) and builds the page. Sections:
// metadata, summary, diagnosis, timelines, heatmap, load balance, energy and carbon, per-GPU
// tables, events. Sets window.gpuscopeReady once everything is drawn (the browser test waits
// for it).
"use strict";

// The embedded data: JSON, gzip-compressed and base64-encoded (data-encoding="gzip+base64"),
// which the browser inflates natively; plain JSON otherwise.
async function gpuscopeDataText() {
  const element = document.getElementById("gpuscope-data");
  if (element.dataset.encoding !== "gzip+base64") return element.textContent;
  if (typeof DecompressionStream !== "function") {
    throw new Error("this browser cannot inflate the report's data (no DecompressionStream); " +
                    "open the report in a current Chrome, Edge, Firefox or Safari");
  }
  const binary = atob(element.textContent.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

(async function () {
  const gs = window.gs;
  const parseStart = performance.now();
  let d;
  try {
    d = JSON.parse(await gpuscopeDataText());
  } catch (e) {
    const main = document.getElementById("report");
    main.textContent = "gpuscope could not read this report's data: " + e.message;
    throw e;
  }
  // Per-GPU summaries come as arrays (d.over_time_metrics of arrays of d.over_time_fields; a big
  // run's hold the means only); make them objects again.
  for (const g of d.gpus) {
    const rows = g.over_time, o = {};
    d.over_time_metrics.forEach((m, k) => {
      const row = rows[k];
      if (!row) { o[m] = null; return; }
      const s = {};
      d.over_time_fields.forEach((f, i) => (s[f] = row[i]));
      o[m] = s;
    });
    g.over_time = o;
  }
  const parseMs = Math.round(performance.now() - parseStart);
  gs.data = d;

  gs.el = function (tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  };
  const esc = gs.esc;
  gs.num = function (v, digits) {
    if (v == null || !isFinite(v)) return "n/a";
    const a = Math.abs(v);
    const p = digits != null ? digits : a >= 100 ? 0 : a >= 10 ? 1 : 2;
    return v.toFixed(p);
  };
  const pct = (f) => (f == null ? "n/a" : gs.num(f * 100, 0) + " %");
  gs.unitOf = function (metric) {
    const u = d.metrics[metric] ? d.metrics[metric].unit : "";
    if (u === "B") return { unit: "GiB", f: (v) => (v == null ? v : v / 1073741824) };
    if (u === "B/s") return { unit: "GB/s", f: (v) => (v == null ? v : v / 1e9) };
    return { unit: u, f: (v) => v };
  };
  const energy = function (j) {
    if (j == null) return "n/a";
    if (Math.abs(j) >= 3.6e6) return gs.num(j / 3.6e6, 2) + " kWh";
    if (Math.abs(j) >= 1e6) return gs.num(j / 1e6, 2) + " MJ";
    if (Math.abs(j) >= 1e3) return gs.num(j / 1e3, 1) + " kJ";
    return gs.num(j, 0) + " J";
  };
  // A run without a host (a log without a hostname field) is named by its label (the file).
  const where = (g) => g.host || g.run_label || "";
  const severalHosts = d.gpus.some((g) => where(g) !== where(d.gpus[0]) || g.rank !== d.gpus[0].rank);
  gs.gpuLabel = function (i) {
    const g = d.gpus[i];
    if (!g) return "GPU ?";
    if (g.mig && g.label) return g.label;  // a MIG instance: "GPU 0 GI 3 (1g.18gb)", its own lane
    return (severalHosts ? where(g) + (g.rank != null ? " rank " + g.rank : "") + " " : "") + "GPU " + g.index;
  };

  // "4 GPUs", or "1 GPU · 3 MIG instances" (a MIG instance is not a GPU of its own).
  const gpuCount = (data) => {
    const instances = data.gpus.filter((g) => g.mig).length, gpus = data.gpus.length - instances;
    const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");
    return plural(gpus, "GPU") + (instances ? " · " + plural(instances, "MIG instance") : "");
  };
  // Stragglers among whole GPUs and among MIG instances (each against its own median).
  gs.stragglers = () => new Set([d.balance, d.mig_balance].filter((b) => b).flatMap((b) => b.stragglers.map((x) => x.gpu)));
  // Table order: each GPU, then its MIG instances (same run, parent's index).
  gs.gpuOrder = function () {
    if (!d.gpus.some((g) => g.mig)) return d.gpus.map((_, i) => i);
    const order = [], placed = new Set();
    d.gpus.forEach((g, i) => {
      if (g.mig) return;
      order.push(i);
      d.gpus.forEach((c, j) => {
        if (c.mig && c.run === g.run && c.mig.parent_index === g.index) { order.push(j); placed.add(j); }
      });
    });
    d.gpus.forEach((g, i) => { if (g.mig && !placed.has(i)) order.push(i); });
    return order;
  };

  // Per-GPU grids (and a big run's grouped rows, grid d.gpu_grid.rows): bytes decoded once per
  // metric, 255 = no sample.
  const bytesCache = new Map();
  gs.gridMetrics = () => d.metric_order.filter((m) => d.gpu_grid && d.gpu_grid.metrics && d.gpu_grid.metrics[m])
    .filter((m) => d.gpu_grid.metrics[m].lo != null);
  gs.gridBytes = function (metric, grid) {
    const g = (grid || d.gpu_grid).metrics[metric];
    if (!bytesCache.has(g)) {
      const s = atob(g.bytes), out = new Uint8Array(s.length);
      for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
      bytesCache.set(g, out);
    }
    return bytesCache.get(g);
  };
  gs.gridTimes = () => Array.from({ length: d.gpu_grid.bins }, (_, b) => (b + 0.5) * d.gpu_grid.bin_s);
  gs.gridSeries = function (metric, g) {
    const grid = d.gpu_grid.metrics[metric], bytes = gs.gridBytes(metric), bins = d.gpu_grid.bins;
    const out = new Array(bins);
    for (let b = 0; b < bins; b++) {
      const q = bytes[g * bins + b];
      out[b] = q === 255 ? null : grid.lo + (q / 254) * (grid.hi - grid.lo);
    }
    return out;
  };
  gs.isOutput = (m) => m.kind === "stdout" || m.kind === "stderr";
  const markFilter = { events: true, output: true };
  gs.visibleMarks = () => d.marks.filter((m) => (gs.isOutput(m) ? markFilter.output : markFilter.events));

  const main = document.getElementById("report");
  const section = function (id, title) {
    const s = gs.el("section");
    s.id = id;
    s.appendChild(gs.el("h2", null, title));
    main.appendChild(s);
    return s;
  };
  const table = gs.tableHtml;
  const div = (cls, html) => { const e = gs.el("div", cls); e.innerHTML = html; return e; };

  function metadata() {
    const s = section("metadata", "Run");
    const rankText = (r) => {
      if (r.rank == null) return "";
      const detail = [r.launcher, r.local_rank != null ? "local " + r.local_rank : null].filter((x) => x);
      return " rank " + r.rank + (r.world_size != null ? "/" + r.world_size : "") +
        (detail.length ? " (" + detail.join(", ") + ")" : "");
    };
    const podText = (r) => (r.pod_name ? " · pod " + (r.pod_namespace ? r.pod_namespace + "/" : "") + r.pod_name : "");
    const run = (r) => [r.host + rankText(r) + podText(r),
      { html: esc(r.command), cls: "wrap" }, r.status + (r.exit_code != null ? " (" + r.exit_code + ")" : ""),
      new Date((d.t0_unix_s + (r.start_offset_s || 0)) * 1000).toISOString().replace(".000Z", "Z"),
      r.end_offset_s != null ? gs.fmtTime(r.end_offset_s - r.start_offset_s) : "interrupted",
      gs.num(r.sampling_interval_s * 1000, 0) + " ms", r.scenario || r.origin || "", { html: esc(r.source), cls: "text" }];
    s.appendChild(gs.pagedTable({ id: "runs-table", header: ["run", "command", "status", "start (UTC)", "duration",
      "interval", "simulated / imported from", "file"], count: d.runs.length, cells: (i) => run(d.runs[i]),
      text: (i) => [d.runs[i].host, "rank " + d.runs[i].rank, d.runs[i].status, d.runs[i].source].join(" "),
      placeholder: "find a run: host, rank…" }));
    // What the runs' data lacks or met (an import's "no energy counter in the log", a profile's
    // sampling failures), each sentence once however many runs recorded it.
    const problems = [...new Set(d.runs.flatMap((r) => r.problems || []))];
    if (problems.length) {
      const list = gs.el("ul", "problems");
      for (const p of problems) list.appendChild(gs.el("li", null, p));
      s.appendChild(list);
    }
    const w = d.window;
    document.getElementById("subtitle").textContent = d.runs.length + " run" + (d.runs.length === 1 ? "" : "s") +
      " · " + gpuCount(d) + " · " + gs.fmtTime(d.duration_s) +
      " · statistics over " + gs.fmtTime(w.start_s) + " – " + gs.fmtTime(w.end_s) +
      (w.leading_trimmed_s > 0 || w.trailing_trimmed_s > 0 ? " (idle edges left out, shaded on the timelines)" : "");
  }

  function summary() {
    const s = section("summary", "Summary");
    const cards = gs.el("div", "cards");
    const card = (value, label) => cards.appendChild(div("card", '<div class="value">' + esc(value) +
      '</div><div class="label">' + esc(label) + "</div>"));
    const e = d.energy_j.counter != null ? d.energy_j.counter : d.energy_j.integrated;
    card(energy(e), d.energy_j.counter != null ? "energy (hardware counter)" : "energy (integrated power)");
    if (d.carbon) card(gs.num(d.carbon.grams, 1) + " gCO2e", "carbon");
    if (d.balance) card(pct(d.balance.mean), "mean activity");
    if (d.efficiency_score) card(gs.num(d.efficiency_score.mean, 2), "efficiency score (mean)");
    card(String(gs.stragglers().size), "stragglers");
    s.appendChild(cards);
  }

  function statistics() {
    const s = section("statistics", "Statistics over all GPUs and time");
    const rows = [], unsupported = [];
    let estimated = false;  // medians from the quantile sketch are marked ≈
    for (const m of d.metric_order) {
      const o = d.over_both[m];
      if (!o) { unsupported.push(m); continue; }
      const c = gs.unitOf(m).f;
      const median = (o.median_exact === false ? "≈" : "") + gs.num(c(o.median));
      estimated = estimated || o.median_exact === false;
      rows.push([m, gs.unitOf(m).unit, gs.num(c(o.mean)), median, gs.num(c(o.min)), gs.num(c(o.max)), o.count]);
    }
    s.appendChild(div("", table(["metric", "unit", "mean", "median", "min", "max", "samples"], rows)));
    if (estimated) s.appendChild(gs.el("p", "note", "≈ median estimated within 0.1 % (too many distinct values to count); the others are exact"));
    if (unsupported.length) s.appendChild(gs.el("p", "note", "not supported on these GPUs: " + unsupported.join(", ")));
  }

  function diagnosis() {
    const s = section("diagnosis", "Diagnosis");
    const ul = gs.el("ul", "findings");
    for (const f of d.findings) ul.appendChild(gs.el("li", f.kind, f.text));
    if (!d.findings.length) ul.appendChild(gs.el("li", null, "nothing stands out"));
    s.appendChild(ul);
    for (const n of d.notes) s.appendChild(gs.el("p", "note", n));
  }

  const preferred = ["power_w", "sm_active_pct", "gpu_util_pct", "flop_active_pct", "tensor_active_pct",
    "dram_active_pct", "temperature_c", "sm_clock_mhz", "memory_used_bytes"];
  const shown = preferred.filter((m) => d.over_space[m]).slice(0, 6);
  let selectedGpus = [];

  function timelines() {
    const s = section("timelines", "Timelines");
    s.appendChild(gs.el("p", "muted", "Mean over GPUs with the min–max band; drag to zoom, wheel to zoom, " +
      "double-click to reset. Orange lines: job events; grey: output lines. Shaded: idle edges left out of the statistics."));
    const controls = gs.el("div", "controls");
    const add = gs.el("select");
    add.appendChild(new Option("add a metric…", ""));
    d.metric_order.filter((m) => d.over_space[m] && !shown.includes(m)).forEach((m) => add.appendChild(new Option(m, m)));
    const gpuSel = gs.el("select");
    gpuSel.multiple = true;
    gpuSel.size = Math.min(6, d.gpus.length);
    gpuSel.id = "gpu-select";
    const big = d.gpus.length > gs.pageRows;
    const optionText = (i) => gs.gpuLabel(i) + (d.gpus[i].name ? " · " + d.gpus[i].name : "");
    // A big run lists the chosen GPUs, the stragglers and the first GPUs matching the search box
    // (200 at most): 10,000 options would cost the page a third of a second.
    const fillGpus = (query) => {
      gpuSel.textContent = "";
      if (!big) { d.gpus.forEach((g, i) => gpuSel.appendChild(new Option(optionText(i), String(i)))); return; }
      const test = gs.matcher(query), listed = new Set(selectedGpus);
      for (const i of [...gs.stragglers(), ...gs.gpuOrder()]) {
        if (listed.size >= selectedGpus.length + 200) break;
        if (!test || test(optionText(i))) listed.add(i);
      }
      for (const i of listed) {
        const o = new Option(optionText(i), String(i));
        o.selected = selectedGpus.includes(i);
        gpuSel.appendChild(o);
      }
    };
    fillGpus("");
    const btn = (label, fn) => { const b = gs.el("button", null, label); b.onclick = fn; controls.appendChild(b); };
    const lbl = gs.el("label", null, "GPUs to draw: ");
    if (big) {
      const find = gs.el("input", "table-search");
      find.type = "search";
      find.id = "gpu-find";
      find.placeholder = "find GPUs: host, rank, GPU…";
      find.addEventListener("input", () => fillGpus(find.value));
      lbl.appendChild(find);
    }
    lbl.appendChild(gpuSel);
    controls.appendChild(lbl);
    controls.appendChild(add);
    btn("◀", () => { const r = gs.view.max - gs.view.min; gs.setView(gs.view.min - r / 4, gs.view.max - r / 4); });
    btn("▶", () => { const r = gs.view.max - gs.view.min; gs.setView(gs.view.min + r / 4, gs.view.max + r / 4); });
    btn("reset zoom", () => gs.setView(gs.view.full[0], gs.view.full[1]));
    for (const [key, text] of [["events", "events"], ["output", "output lines"]]) {
      const l = gs.el("label"), c = gs.el("input");
      c.type = "checkbox"; c.checked = true;
      c.onchange = () => { markFilter[key] = c.checked; gs.view.charts.forEach((u) => u.redraw(false)); };
      l.appendChild(c); l.appendChild(document.createTextNode(text));
      controls.appendChild(l);
    }
    s.appendChild(controls);
    const holder = gs.el("div");
    s.appendChild(holder);
    const missing = d.metric_order.filter((m) => !d.over_space[m]);
    if (missing.length) s.appendChild(gs.el("p", "note", "not supported on these GPUs (no samples): " + missing.join(", ")));
    const draw = () => {
      gs.view.charts.forEach((u) => u.destroy());
      gs.view.charts = [];
      holder.textContent = "";
      const width = Math.max(400, holder.clientWidth || main.clientWidth || 1000);
      gs.phaseLanes(holder, width);  // phases.js: above the metrics, when the runs have phases
      for (const m of shown) gs.timeline(holder, m, selectedGpus, width);
      gs.kernelLanes(holder, width);  // kernels.js: under the metrics, when the run has a trace
    };
    gpuSel.onchange = () => {
      selectedGpus = Array.from(gpuSel.selectedOptions).map((o) => Number(o.value)).slice(0, 8);
      draw();
    };
    add.onchange = () => { if (add.value) { shown.push(add.value); add.remove(add.selectedIndex); draw(); } add.value = ""; };
    let end = 0;
    for (const m of Object.keys(d.over_space)) { const t = d.over_space[m].t_s; end = Math.max(end, t[t.length - 1] || 0); }
    gs.view.full = [0, Math.max(end + d.resolution_s, d.duration_s, 1e-3)];
    gs.view.min = 0; gs.view.max = gs.view.full[1];
    draw();
    window.addEventListener("resize", () => {
      const width = Math.max(400, holder.clientWidth);
      gs.view.charts.forEach((u) => u.setSize({ width: width, height: 200 }));
    });
    if (!shown.length) s.appendChild(gs.el("p", "note", "no metric has samples to draw"));
  }

  function heatmap() {
    const s = section("heatmap", "GPU × time heatmap");
    const metrics = gs.gridMetrics();
    if (!metrics.length) { s.appendChild(gs.el("p", "note", "no per-GPU series in this report")); return; }
    const controls = gs.el("div", "controls");
    const sel = gs.el("select");
    sel.id = "heatmap-metric";
    metrics.forEach((m) => sel.appendChild(new Option(m, m)));
    sel.value = metrics.includes("sm_active_pct") ? "sm_active_pct" : metrics[0];
    controls.appendChild(sel);
    const legend = gs.el("span", "muted");
    controls.appendChild(legend);
    s.appendChild(controls);
    const wrap = gs.el("div", "chart");
    const canvas = gs.el("canvas", "heatmap");
    canvas.id = "heatmap-canvas";
    canvas.width = Math.max(400, main.clientWidth - 40 || 1000);
    canvas.height = Math.min(600, Math.max(120, d.gpus.length * 18));
    const tip = gs.el("div", "tooltip");
    wrap.appendChild(canvas);
    wrap.appendChild(tip);
    s.appendChild(wrap);
    const rows = d.gpu_grid.rows;  // a big run: groups of GPUs at the full time resolution
    s.appendChild(gs.el("p", "muted", (rows
      ? "Rows: groups of " + rows.gpus_per_row + " consecutive GPUs (" + rows.count + " rows), each the mean of its GPUs; " +
        "hover for which GPUs, find one GPU in the table below and draw it on the timelines"
      : "Rows: GPUs in table order") + " (red tick: straggler); columns: " +
      gs.fmtTime((rows || d.gpu_grid).bin_s) + " bins over the whole run; grey: no sample."));
    const paint = () => {
      const m = sel.value, g = (rows || d.gpu_grid).metrics[m], c = gs.unitOf(m);
      legend.textContent = "dark " + gs.num(c.f(g.lo)) + " → bright " + gs.num(c.f(g.hi)) + " " + c.unit;
      gs.heatmap(canvas, m, tip);
    };
    sel.onchange = paint;
    paint();
  }

  function balance() {
    const s = section("balance", "Load balance");
    if (!d.balance && !d.mig_balance) { s.appendChild(gs.el("p", "note", "load balance needs two or more GPUs with activity data")); return; }
    const b = d.balance;
    s.appendChild(gs.el("p", null, "Activity per GPU (time average over the window; whiskers p5–p95)." + (b ? " Mean " +
      pct(b.mean) + ", median " + pct(b.median) + ", max/mean " + gs.num(b.max_over_mean, 2) + ", CV " +
      gs.num(b.cv, 2) + "." : " Fewer than two whole GPUs to compare.")));
    const wrap = gs.el("div", "chart");
    const canvas = gs.el("canvas", "balance");
    canvas.id = "balance-canvas";
    canvas.width = Math.max(400, main.clientWidth - 40 || 1000);
    canvas.height = 220;
    const tip = gs.el("div", "tooltip");
    wrap.appendChild(canvas); wrap.appendChild(tip);
    s.appendChild(wrap);
    gs.balanceChart(canvas, tip);
    const ul = gs.el("ul", "findings");
    ul.id = "stragglers";
    for (const [bal, whom] of [[d.balance, "GPU"], [d.mig_balance, "MIG instance"]]) {
      for (const st of bal ? bal.stragglers : []) {
        const li = ul.appendChild(gs.el("li", "straggler", gs.gpuLabel(st.gpu) + ": " + pct(st.below_median) +
          " below the median " + whom + ", about " + gs.num(st.gpu_seconds_lost, 1) + " GPU-seconds lost"));
        li.onclick = () => {  // a big run's paged table: show this GPU's row
          const t = document.getElementById("gpu-table");
          if (t && t.find) { t.find(gs.gpuLabel(st.gpu)); t.scrollIntoView(); }
        };
      }
    }
    if (!ul.children.length) ul.appendChild(gs.el("li", null, "no straggler"));
    s.appendChild(ul);
    if (d.mig_balance) {
      const m = d.mig_balance;
      s.appendChild(gs.el("p", "muted", "MIG instances are compared among themselves (activity of their own " +
        "instance; their parent GPUs are left out of the GPUs' balance): mean " + pct(m.mean) + ", median " +
        pct(m.median) + ", max/mean " + gs.num(m.max_over_mean, 2) + ", CV " + gs.num(m.cv, 2) + "."));
    }
  }

  function energyCarbon() {
    const s = section("energy", "Energy and carbon");
    const rows = [["energy (hardware counter)", energy(d.energy_j.counter)],
      ["energy (integrated power)", energy(d.energy_j.integrated)]];
    if (d.work.units != null) rows.push(["work", gs.num(d.work.units) + " " + d.work.name],
      ["energy per " + d.work.name.replace(/s$/, ""), energy(d.work.energy_per_unit_j)]);
    if (d.carbon) {
      rows.push(["carbon", gs.num(d.carbon.grams, 2) + " gCO2e"],
        ["intensity", gs.num(d.carbon.g_per_kwh, 1) + " g/kWh, PUE " + gs.num(d.carbon.pue, 2)],
        ["source", { html: esc(d.carbon.source), cls: "wrap" }]);
      if (d.carbon.grams_per_unit != null) rows.push(["carbon per unit", gs.num(d.carbon.grams_per_unit, 4) + " g"]);
      if (d.carbon.flat_grams != null) {
        rows.push(["at the flat figure", gs.num(d.carbon.flat_grams, 2) + " gCO2e (" +
          gs.num(100 * (d.carbon.grams / d.carbon.flat_grams - 1), 0) + " %)"],
          ["flat figure", { html: esc(d.carbon.flat_source || ""), cls: "wrap" }],
          ["periods' coverage", pct(d.carbon.coverage)]);
      }
      if (d.carbon.greener_start) {
        const g = d.carbon.greener_start;
        rows.push(["greener start (estimate)", gs.fmtTime(g.later_s) + " later: " + gs.num(100 * g.saving, 0) +
          " % less (" + gs.num(g.grams, 2) + " instead of " + gs.num(g.baseline_grams, 2) + " gCO2e, " + g.kind + ")"]);
      }
    }
    s.appendChild(div("", table(["", ""], rows)));
    nodeEnergy(s);
    const periods = d.carbon && d.carbon.intervals ? d.carbon.intervals : [];
    if (!periods.length) return;
    // The grid as it was: intensity over the run beside power, and each period's carbon.
    gs.intensityTimeline(s, Math.max(400, Math.min(1100, main.clientWidth - 40)));
    const iso = (ns) => new Date(ns / 1e6).toISOString().replace(":00.000Z", "Z").replace("T", " ");
    const t = div("scroll", table(["from (UTC)", "to", "kind", "gCO2e/kWh", "energy", "carbon"],
      periods.map((p) => [iso(p.start_wall_ns), iso(p.end_wall_ns), p.kind, gs.num(p.g_per_kwh, 0),
        energy(p.energy_j), gs.num(p.grams, 3) + " g"])));
    t.id = "carbon-periods";
    s.appendChild(t);
  }

  // The node's CPU and memory energy beside the GPUs' (docs/node-energy.md), when recorded.
  function nodeEnergy(s) {
    const n = d.node_energy;
    if (!n) return;
    s.appendChild(gs.el("h3", "", "Node energy: GPU, CPU, memory"));
    const rows = [["GPUs", energy(n.gpu_j)], ["CPUs (the node's)", energy(n.cpu_j)],
      ["memory (the node's)", energy(n.dram_j)], ["total", energy(n.total_j)]];
    if (n.total_carbon_g != null) rows.push(["carbon of the total", gs.num(n.total_carbon_g, 2) + " gCO2e"]);
    if (n.job_estimate.share != null) {
      rows.push(["the job's CPU + memory (estimate)", energy(n.job_estimate.cpu_dram_j) + " (" +
        pct(n.job_estimate.share) + " of the node's CPU time was the job's)"]);
    }
    s.appendChild(div("", table(["", ""], rows)));
    s.appendChild(gs.el("p", "muted", "CPU and memory energy is the whole node's; a GH200 module's " +
      "meter includes the GPU and is never added."));
    s.appendChild(div("scroll", table(["domain", "kind", "added as", "energy", "power"],
      n.domains.map((x) => [x.host ? x.host + " " + x.name : x.name, x.kind,
        x.added_as === "not added" ? "no: " + x.not_added_because : x.added_as, energy(x.energy_j),
        x.mean_power_w == null ? "-" : gs.num(x.mean_power_w, 1) + " W"]))));
  }

  function gpuTables() {
    const s = section("gpus", "Per GPU");
    const stragglers = gs.stragglers();
    const order = gs.gpuOrder();
    const flop = (g) => (g.over_time.flop_active_pct ? gs.num(g.over_time.flop_active_pct.mean, 0) + " %" : "n/a");
    // A MIG instance's energy and power are an estimated share of its parent's: marked, never measured.
    const est = (text) => ({ html: '<span class="estimate" title="estimate: a share of the parent GPU\'s measured ' +
      'energy (slices × activity), not a measurement">est. ' + esc(text) + "</span>" });
    const energyCells = (g) => (g.mig
      ? (g.estimated ? [est(energy(g.estimated.energy_j)), est(gs.num(g.estimated.power_w, 0) + " W")] : ["n/a", "n/a"])
      : [energy(g.energy_j.counter != null ? g.energy_j.counter : g.energy_j.integrated), gs.num(g.average_power_w, 0) + " W"]);
    const cells = (i) => {
      const g = d.gpus[i], bal = g.mig ? d.mig_balance : d.balance, med = bal ? bal.median : null;
      return [(g.mig ? "└ " : "") + gs.gpuLabel(i), g.name, pct(g.activity),
        g.activity != null && med ? gs.num(((g.activity - med) / med) * 100, 0) + " %" : "n/a", flop(g)]
        .concat(energyCells(g), [gs.num(g.peak_power_w, 0) + " W", gs.num(g.power_limit_w, 0) + " W",
          g.score ? gs.num(g.score.mean, 2) : "n/a",
          g.throttle_s ? gs.fmtTime(g.throttle_s.any_s) : "n/a", gs.fmtTime(g.covered_s)]);
    };
    // A big run's table is paged: found by a search (host, rank, GPU), or sorted by activity
    // so that the least and most active GPUs come first.
    const text = (i) => gs.gpuLabel(i) + " " + (d.gpus[i].name || "") + (stragglers.has(i) ? " straggler" : "");
    const byActivity = (sign) => () => order.filter((i) => d.gpus[i].activity != null)
      .sort((a, b) => sign * (d.gpus[a].activity - d.gpus[b].activity))
      .concat(order.filter((i) => d.gpus[i].activity == null));
    const sorts = [["table order", () => order], ["stragglers first", () => order.filter((i) => stragglers.has(i))
      .concat(order.filter((i) => !stragglers.has(i)))], ["activity, lowest first", byActivity(1)],
    ["activity, highest first", byActivity(-1)]];
    s.appendChild(gs.pagedTable({ id: "gpu-table", header: ["GPU", "name", "activity", "vs median", "FLOP activity",
      "energy", "avg power", "peak", "limit", "score", "throttled", "covered"], count: d.gpus.length, cells: cells,
      rowClass: (i) => ((stragglers.has(i) ? "straggler" : "") + (d.gpus[i].mig ? " mig-instance" : "")).trim(),
      text: text, sorts: sorts, placeholder: "find a GPU: host, rank, GPU…" }));
    if (d.gpus.some((g) => g.mig)) {
      s.appendChild(gs.el("p", "note", "est.: an estimated share of the parent GPU's measured energy and power " +
        "(its compute slices weighted by its activity), not a measurement; the totals count measured energy only. " +
        "A MIG instance's power, temperature and clocks are its parent's."));
    }
    // Every metric's mean per GPU: GPUs × metrics cells (30 000 for 1024 GPUs), so for big runs
    // it is built when first opened rather than laid out while the page loads.
    const ms = d.metric_order.filter((m) => d.over_both[m]);
    const det = gs.el("details");
    det.id = "gpu-means";
    det.appendChild(gs.el("summary", null, "Mean of every metric per GPU over the window (" +
      d.gpus.length + " GPUs × " + ms.length + " metrics)"));
    const build = () => {
      if (det.dataset.built) return;
      det.dataset.built = "1";
      const means = (i) => [gs.gpuLabel(i)].concat(ms.map((m) => {
        const o = d.gpus[i].over_time[m];
        return o ? gs.num(gs.unitOf(m).f(o.mean)) : { html: '<span class="note">not supported on this GPU</span>' };
      }));
      det.appendChild(gs.pagedTable({ header: ["GPU"].concat(ms.map((m) => m + " (" + gs.unitOf(m).unit + ")")),
        count: d.gpus.length, cells: means, rowClass: (i) => (stragglers.has(i) ? "straggler" : ""), text: text,
        placeholder: "find a GPU: host, rank, GPU…" }));
    };
    det.addEventListener("toggle", () => { if (det.open) build(); });
    if (d.gpus.length <= 64) { build(); det.open = true; }
    s.appendChild(det);
  }

  // Which processes used each GPU (profile's processes table): one row per process and GPU.
  function processes() {
    const list = d.processes || [];
    if (!list.length) return;
    const s = section("processes", "Processes on the GPUs");
    const mib = (b) => (b == null ? "n/a" : b >= 1 << 30 ? gs.num(b / (1 << 30), 1) + " GiB" : gs.num(b / (1 << 20), 0) + " MiB");
    const where = (p) => [p.container_id ? (p.container_runtime || "container") + " " + p.container_id.slice(0, 12) : null,
      p.pod_name || p.pod_uid ? "pod " + (p.pod_namespace ? p.pod_namespace + "/" : "") + (p.pod_name || p.pod_uid.slice(0, 8)) : null,
      p.slurm_job_id ? "job " + p.slurm_job_id + (p.slurm_step ? "." + p.slurm_step : "") : null,
      p.rank != null ? "rank " + p.rank : null].filter((x) => x).join(", ");
    const row = (p) => [p.gpu, String(p.pid), p.command || "?", p.user || "", where(p) || "",
      p.in_job == null ? "" : p.in_job ? "yes" : "no", mib(p.peak_memory_bytes),
      p.mean_sm_percent != null ? gs.num(p.mean_sm_percent, 0) + " %" : "n/a",
      gs.fmtTime(p.first_s) + " – " + gs.fmtTime(p.last_s), { html: esc(p.command_line || ""), cls: "wrap" }];
    s.appendChild(gs.pagedTable({ header: ["GPU", "pid", "command", "user", "container / pod / job", "in job",
      "peak memory", "SM", "seen", "command line"], count: list.length, cells: (i) => row(list[i]),
      rowClass: (i) => (list[i].in_job === false ? "straggler" : ""),
      text: (i) => [list[i].gpu, list[i].pid, list[i].command, list[i].user, where(list[i])].join(" "),
      placeholder: "find a process: GPU, pid, command, user…" }));
    s.appendChild(gs.el("p", "muted", "Rows in red: processes outside the profiled job on its GPUs."));
  }

  // Per phase name (docs/phases.md): count, time, energy, share, power, saturation.
  function phases() {
    const p = d.phases;
    if (!p || !p.names || !p.names.length) return;
    const s = section("phases", "Phases");
    const pct = (x) => (x == null ? "n/a" : gs.num(100 * x, 0) + " %");
    const v = (x, unit, digits) => (x == null ? "n/a" : gs.num(x, digits) + unit);
    const rows = p.names.map((n) => {
      const t = n.total || {}, m = t.metrics || {};
      return [n.name + (n.unclosed ? " *" : ""), n.source, n.count ? String(n.count) : n.points + " points",
        gs.fmtTime(t.time_s || 0), gs.fmtTime(t.exclusive_time_s || 0), gs.fmtTime(n.mean_time_s || 0),
        n.count > 1 ? "±" + gs.num(100 * n.time_cv, 0) + " %" : "", energy(t.energy_j), pct(t.energy_share),
        v(t.mean_power_w, " W", 0), v(m.sm_active_pct, " %", 0), v(m.tensor_active_pct, " %", 0),
        v(m.dram_active_pct, " %", 0)];
    });
    s.appendChild(div("scroll", table(["phase", "source", "count", "time", "own time", "mean", "spread", "energy",
      "of job", "power", "SM active", "tensor", "DRAM"], rows)));
    s.appendChild(gs.el("p", "muted", p.instance_count.toLocaleString("en-US") + " instances covering " +
      gs.fmtTime(p.covered_time_s) + "; own time leaves out nested phases; * never ended (counted to the end of the job)."));
  }

  function events() {
    const s = section("events", "Events and output");
    if (!d.marks.length) { s.appendChild(gs.el("p", "note", "no events or output lines recorded")); return; }
    const det = gs.el("details");
    det.appendChild(gs.el("summary", null, d.marks.length + " events and output lines"));
    det.appendChild(div("scroll", table(["time", "kind", "where", "text"], d.marks.map((m) =>
      [gs.fmtTime(m.t_s), m.kind, m.where, { html: esc(m.text), cls: "wrap" }]))));
    s.appendChild(det);
  }

  try {
    // Each section's drawing time in ms (window.gs.timings), for the benchmark.
    gs.timings = { parse: parseMs, data_at: Math.round(parseStart + parseMs) };
    for (const part of [metadata, summary, diagnosis, phases, timelines, heatmap, balance, energyCarbon, statistics,
      gpuTables, processes, events]) {
      const start = performance.now();
      part();
      gs.timings[part.name] = Math.round(performance.now() - start);
    }
    gs.timings.drawn_at = Math.round(performance.now());
  } catch (e) {
    main.appendChild(gs.el("p", "error", "The report could not be drawn: " + e.message));
    throw e;
  }
  requestAnimationFrame(() => setTimeout(() => {
    window.gpuscopeReadyMs = performance.now();  // since navigation start
    window.gpuscopeReady = true;
    document.documentElement.dataset.ready = "1";
  }, 0));
})();
