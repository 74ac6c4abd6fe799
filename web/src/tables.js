// gpuscope report: tables. gs.tableHtml writes one; gs.pagedTable shows a big one (a run of
// 10,000 GPUs, 1,250 ranks) a page at a time with a search box and, optionally, orders to sort
// it by, so the page lays out a few hundred rows whatever the run's size and every row can
// still be found. Loaded before report.js.
"use strict";
var gs = window.gs || {};
window.gs = gs;

gs.pageRows = 256;  // tables of more rows are paged

gs.esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g, (c) =>
  ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

// header: column titles; rows: arrays of cells (text, or {html, cls}); rowClass(r): row r's class.
gs.tableHtml = function (header, rows, rowClass) {
  let h = "<table><thead><tr>" + header.map((c) => "<th>" + gs.esc(c) + "</th>").join("") + "</tr></thead><tbody>";
  rows.forEach((r, i) => {
    const cls = rowClass ? rowClass(i) : "";
    h += "<tr" + (cls ? ' class="' + cls + '"' : "") + ' data-row="' + i + '">' +
      r.map((c) => (c && c.html != null ? '<td class="' + (c.cls || "") + '">' + c.html + "</td>" : "<td>" + gs.esc(c) + "</td>")).join("") + "</tr>";
  });
  return h + "</tbody></table>";
};

// A search: every word of the query is the start of a word of the row's text ("nid004", "gpu"),
// or, a number, one of its words ("rank 12 gpu 3" finds neither rank 120 nor GPU 31), case
// ignored. Returns a test of a row's text, or null for an empty query.
gs.matcher = function (query) {
  const words = query.toLowerCase().split(/\s+/).filter((w) => w);
  if (!words.length) return null;
  const fits = words.map((w) => (/^\d+$/.test(w) ? (t) => t === w : (t) => t.startsWith(w)));
  return (text) => {
    const tokens = text.toLowerCase().split(/[\s·,;:()/\[\]]+/);
    return fits.every((fit) => tokens.some(fit));
  };
};

// opts: id, header, count (rows), cells(i), rowClass(i), text(i) (what the search reads), sorts
// ([[label, () => row indices in that order]], the first is the default), placeholder.
// Returns the element: a plain scrolled table up to gs.pageRows rows, else the paged one.
gs.pagedTable = function (opts) {
  const box = gs.el("div", "paged");
  if (opts.id) box.id = opts.id;
  const wrap = gs.el("div", "scroll");
  const cls = (i) => (opts.rowClass ? opts.rowClass(i) : "");
  const all = Array.from({ length: opts.count }, (_, i) => i);
  if (opts.count <= gs.pageRows) {
    const order = opts.sorts ? opts.sorts[0][1]() : all;
    wrap.innerHTML = gs.tableHtml(opts.header, order.map(opts.cells), (r) => cls(order[r]));
    box.appendChild(wrap);
    return box;
  }
  const controls = gs.el("div", "controls pager");
  const search = gs.el("input", "table-search");
  search.type = "search";
  search.placeholder = opts.placeholder || "find…";
  controls.appendChild(search);
  let sort = null;
  if (opts.sorts) {
    sort = gs.el("select", "table-sort");
    opts.sorts.forEach(([label], k) => sort.appendChild(new Option(label, String(k))));
    controls.appendChild(sort);
  }
  const button = (label, cls) => { const b = gs.el("button", cls, label); controls.appendChild(b); return b; };
  const prev = button("◀ page", "page-prev"), next = button("page ▶", "page-next");
  const info = gs.el("span", "muted page-info");
  controls.appendChild(info);
  box.appendChild(controls);
  box.appendChild(wrap);
  let texts = null, matches = all, page = 0;
  const render = () => {
    const pages = Math.max(1, Math.ceil(matches.length / gs.pageRows));
    page = Math.min(Math.max(0, page), pages - 1);
    const shown = matches.slice(page * gs.pageRows, (page + 1) * gs.pageRows);
    wrap.innerHTML = gs.tableHtml(opts.header, shown.map(opts.cells), (r) => cls(shown[r]));
    info.textContent = !matches.length ? "no row matches"
      : "rows " + (page * gs.pageRows + 1) + "–" + (page * gs.pageRows + shown.length) + " of " +
        matches.length + (matches.length < opts.count ? " found (" + opts.count + " in all)" : "") +
        " · page " + (page + 1) + " of " + pages;
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  };
  const refilter = () => {
    const order = sort ? opts.sorts[Number(sort.value)][1]() : all;
    const test = gs.matcher(search.value);
    if (test && !texts) texts = all.map((i) => (opts.text ? opts.text(i) : opts.cells(i).join(" ")));
    matches = test ? order.filter((i) => test(texts[i])) : order;
    page = 0;
    render();
  };
  search.addEventListener("input", refilter);
  if (sort) sort.onchange = refilter;
  prev.onclick = () => { page--; render(); };
  next.onclick = () => { page++; render(); };
  box.find = (query) => { search.value = query; refilter(); };  // for links to a row
  refilter();
  return box;
};
