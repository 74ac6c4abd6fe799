// gpuscope site report: the nodes × time heatmap on one canvas. The cells come as bytes
// (#site-heatmap): nodes × bins utilization bytes (0..250 for 0..100 %, 255 blank: no job held
// a GPU of the node), then as many busy-share bytes (1..250 for a share up to 1). They are
// written pixel by pixel into an image of bins × nodes and scaled up by whole pixels without
// smoothing, so a year of 2,000 nodes (730,000 cells) draws in milliseconds with no element
// per cell. Loaded before site.js; hangs off window.gsSite.
"use strict";
var gsSite = window.gsSite || {};
window.gsSite = gsSite;

gsSite.blankByte = 255;
gsSite.utilSteps = 250;

// The colour of a utilization byte: a perceptual ramp from dark violet (0 %) to yellow (100 %).
gsSite.ramp = (function () {
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const out = [];
  for (let i = 0; i <= gsSite.utilSteps; i++) {
    const x = (i / gsSite.utilSteps) * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(x)), t = x - k;
    out.push(stops[k].map((c, j) => Math.round(c + t * (stops[k + 1][j] - c))));
  }
  return out;
})();
gsSite.utilColour = (b) => gsSite.ramp[Math.min(gsSite.utilSteps, b)];

// A time in UTC: a date for daily bins or longer, else a date and minutes.
gsSite.utcTime = function (ms, withClock) {
  const iso = new Date(ms).toISOString();
  return withClock ? iso.slice(0, 10) + " " + iso.slice(11, 16) : iso.slice(0, 10);
};

// The layout of the canvas for h (d.heatmap): cells of whole pixels, a gutter for node names on
// the left and one for times above (a tall heatmap's bottom is far down).
gsSite.heatLayout = function (h, width) {
  const left = 110, bottom = 6, top = 22;
  const plotW = Math.max(1, width - left - 8);
  const colPx = Math.max(1, Math.floor(plotW / Math.max(1, h.bins)));
  const rowPx = Math.max(1, Math.min(18, Math.floor(640 / Math.max(1, h.nodes.length))));
  return { left, top, bottom, colPx, rowPx,
           width: left + colPx * h.bins + 8, height: top + rowPx * h.nodes.length + bottom };
};

// The centre of cell (node, bin) in canvas pixels (the browser test reads the pixel there).
gsSite.heatCell = function (node, bin) {
  const L = gsSite.heatmapLayout;
  return { x: L.left + bin * L.colPx + Math.floor(L.colPx / 2),
           y: L.top + node * L.rowPx + Math.floor(L.rowPx / 2) };
};

function heatImage(bytes, cells, bins, nodes) {
  const image = new ImageData(bins, nodes);
  const px = image.data;
  for (let i = 0; i < cells; i++) {
    const b = bytes[i];
    if (b === gsSite.blankByte) continue;  // transparent: blank
    const c = gsSite.ramp[b > gsSite.utilSteps ? gsSite.utilSteps : b], o = i * 4;
    px[o] = c[0]; px[o + 1] = c[1]; px[o + 2] = c[2]; px[o + 3] = 255;
  }
  return image;
}

function heatAxes(ctx, h, L) {
  ctx.fillStyle = "#5f6b7a";
  ctx.font = "11px sans-serif";
  ctx.textBaseline = "middle";
  const every = Math.max(1, Math.ceil(14 / L.rowPx));
  for (let n = 0; n < h.nodes.length; n += every) {
    const name = h.nodes[n].length > 16 ? h.nodes[n].slice(0, 15) + "…" : h.nodes[n];
    ctx.fillText(name, 2, Math.max(L.top + 5, L.top + n * L.rowPx + L.rowPx / 2));
  }
  ctx.textBaseline = "top";
  const clock = h.bin_ms < 86400000, y = 4;
  const step = Math.max(1, Math.ceil((clock ? 130 : 90) / L.colPx));
  for (let b = 0; b < h.bins; b += step) {
    ctx.fillText(gsSite.utcTime(h.start_ms + b * h.bin_ms, clock), L.left + b * L.colPx, y);
  }
}

// Draws the heatmap of d.heatmap with `bytes` into `canvas`; `tip` shows the cell under the
// pointer. Returns the milliseconds it took.
gsSite.drawHeatmap = function (canvas, tip, h, bytes, width) {
  const began = performance.now();
  const nodes = h.nodes.length, bins = h.bins, cells = nodes * bins;
  const L = gsSite.heatLayout(h, width);
  gsSite.heatmapLayout = L;
  canvas.width = L.width;
  canvas.height = L.height;
  canvas.style.width = L.width + "px";
  canvas.style.height = L.height + "px";
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, L.width, L.height);
  if (cells > 0) {
    const off = document.createElement("canvas");
    off.width = bins;
    off.height = nodes;
    off.getContext("2d").putImageData(heatImage(bytes, cells, bins, nodes), 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(off, L.left, L.top, bins * L.colPx, nodes * L.rowPx);
  }
  heatAxes(ctx, h, L);
  canvas.onmousemove = function (e) {
    const r = canvas.getBoundingClientRect();
    const x = (e.clientX - r.left) * (canvas.width / r.width) - L.left;
    const y = (e.clientY - r.top) * (canvas.height / r.height) - L.top;
    const bin = Math.floor(x / L.colPx), node = Math.floor(y / L.rowPx);
    if (x < 0 || y < 0 || bin >= bins || node >= nodes) { tip.style.display = "none"; return; }
    const i = node * bins + bin, b = bytes[i];
    const when = gsSite.utcTime(h.start_ms + bin * h.bin_ms, h.bin_ms < 86400000) + " UTC";
    const what = b === gsSite.blankByte ? "no job"
      : "utilization " + Math.round((b / gsSite.utilSteps) * 100) + " % · busy " +
        Math.round((bytes[cells + i] / gsSite.utilSteps) * 100) + " %";
    tip.textContent = h.nodes[node] + " · " + when + " · " + what;
    tip.style.display = "block";
    tip.style.left = (canvas.offsetLeft + e.offsetX + 14) + "px";
    tip.style.top = (canvas.offsetTop + e.offsetY + 14) + "px";
  };
  canvas.onmouseleave = () => (tip.style.display = "none");
  return performance.now() - began;
};

// The legend: the ramp from 0 to 100 % on a small canvas.
gsSite.heatLegend = function () {
  const c = document.createElement("canvas");
  c.width = 200;
  c.height = 10;
  c.className = "heat-legend";
  const ctx = c.getContext("2d");
  for (let x = 0; x < 200; x++) {
    const rgb = gsSite.utilColour(Math.round((x / 199) * gsSite.utilSteps));
    ctx.fillStyle = "rgb(" + rgb.join(",") + ")";
    ctx.fillRect(x, 0, 1, 10);
  }
  return c;
};
