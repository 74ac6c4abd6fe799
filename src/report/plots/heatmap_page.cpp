// GPU × time heatmap of one metric, from the per-GPU series the Analysis keeps
// (GpuReport::grid): one row per GPU, one column per grid bin, missing bins light grey.
#include <fmt/format.h>
#include <plplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "report/plots/draw.hpp"
#include "report/plots/pages.hpp"

namespace gpuscope::report::plots {
namespace {

constexpr std::size_t kMaxRowLabels = 40;

const analyze::GpuGridSeries* series_of(const analyze::GpuReport& gpu, Metric metric) {
  for (const auto& s : gpu.grid) {
    if (s.metric == metric) return &s;
  }
  return nullptr;
}

bool has_values(const analyze::GpuGridSeries* s) {
  return s != nullptr &&
         std::any_of(s->mean.begin(), s->mean.end(), [](float v) { return !std::isnan(v); });
}

// The requested metric, else SM active, GPU utilization or the first kept series.
std::optional<Metric> choose_metric(const analyze::Analysis& a, std::optional<Metric> requested) {
  if (requested) return requested;
  for (Metric m : {Metric::SmActivePct, Metric::GpuUtilPct}) {
    for (const auto& g : a.gpus) {
      if (has_values(series_of(g, m))) return m;
    }
  }
  for (const auto& g : a.gpus) {
    for (const auto& s : g.grid) {
      if (has_values(&s)) return s.metric;
    }
  }
  return std::nullopt;
}

// A vertical colour bar for `zmin`..`zmax` in `box`, labelled with `unit` on the right.
void colour_bar(const PlotStream& stream, const Box& box, double zmin, double zmax,
                const std::string& unit) {
  constexpr int kSteps = 256;
  std::array<PLFLT, kSteps> column{};
  for (int i = 0; i < kSteps; ++i) {
    column[static_cast<std::size_t>(i)] = zmin + (zmax - zmin) * i / (kSteps - 1);
  }
  // Two identical columns: plimage colours the cells between its points.
  const std::array<const PLFLT*, 2> columns = {column.data(), column.data()};
  plvpor(box.x0, box.x1, box.y0, box.y1);
  plwind(0, 1, zmin, zmax);
  plimagefr(columns.data(), 2, kSteps, 0, 1, zmin, zmax, zmin, zmax, zmin, zmax, nullptr, nullptr);
  set_colour(Colour::Ink);
  text_size(stream, 14);
  plbox("bc", 0, 0, "bcmstv", 0, 0);
  plmtex("r", 4.5, 0.5, 0.5, unit.c_str());
}

// The GPUs with `metric`'s series, in the Analysis' order (the rows, top to bottom).
std::vector<std::size_t> gpus_with_series(const analyze::Analysis& a,
                                          std::optional<Metric> metric) {
  std::vector<std::size_t> gpus;
  if (metric) {
    for (std::size_t i = 0; i < a.gpus.size(); ++i) {
      if (has_values(series_of(a.gpus[i], *metric))) gpus.push_back(i);
    }
  }
  return gpus;
}

// The page when there is nothing to draw: an empty frame with the reason in it, which is also
// the page's note.
void draw_empty_heatmap(const analyze::Analysis& a, const PlotStream& stream,
                        std::optional<Metric> metric, const Box& frame, PageText& page) {
  draw_header(a, stream, page.title);
  plvpor(frame.x0, frame.x1, frame.y0, frame.y1);
  set_colour(Colour::Ink);
  plwind(0, 1, 0, 1);
  plbox("bc", 0, 0, "bc", 0, 0);
  const std::string message = a.gpus.empty() ? "no samples"
                              : metric ? fmt::format("{} not supported on {} (or not kept per GPU)",
                                                     info(*metric).name, these_gpus(a))
                                       : "no per-GPU series kept: pass the metric in the analysis' "
                                         "gpu_grid_metrics";
  text_size(stream, 18);
  centred_message(message);
  page.notes.push_back(message);
}

// The colour scale's range, in display units.
struct ColourRange {
  double zmin = 0, zmax = 1;
};

// The range of the rows' values, from 0 (0–100 at least for percentages), never empty.
ColourRange colour_range(const analyze::Analysis& a, const std::vector<std::size_t>& gpus,
                         Metric metric, const DisplayUnit& unit) {
  double zmin = std::numeric_limits<double>::infinity();
  double zmax = -zmin;
  for (std::size_t gpu : gpus) {
    for (float v : series_of(a.gpus[gpu], metric)->mean) {
      if (std::isnan(v)) continue;
      zmin = std::min(zmin, static_cast<double>(v) / unit.divisor);
      zmax = std::max(zmax, static_cast<double>(v) / unit.divisor);
    }
  }
  if (info(metric).unit == "%") {
    zmin = 0;
    zmax = std::max(100.0, zmax);
  } else {
    zmin = std::min(zmin, 0.0);
  }
  if (zmax <= zmin) zmax = zmin + 1;
  return {zmin, zmax};
}

// The image's values: idata[x][y], x the time bin, y the row counted from the bottom. plimage
// treats the values as the corners of its cells and colours each cell by its lower-left corner,
// so one more column and row (copies) give one cell per bin and GPU. NaN becomes a value below
// zmin, which plimage leaves undrawn so the grey background shows.
std::vector<std::vector<PLFLT>> cell_corners(const analyze::Analysis& a,
                                             const std::vector<std::size_t>& gpus, Metric metric,
                                             const DisplayUnit& unit, const ColourRange& range) {
  const std::size_t bins = a.gpu_grid_bins;
  const std::size_t rows = gpus.size();
  const double missing = range.zmin - (range.zmax - range.zmin) - 1;
  std::vector<std::vector<PLFLT>> data(bins + 1, std::vector<PLFLT>(rows + 1, missing));
  for (std::size_t r = 0; r < rows; ++r) {
    const auto& mean = series_of(a.gpus[gpus[r]], metric)->mean;
    for (std::size_t b = 0; b < bins && b < mean.size(); ++b) {
      if (!std::isnan(mean[b])) data[b][rows - 1 - r] = static_cast<double>(mean[b]) / unit.divisor;
    }
  }
  for (std::size_t b = 0; b < bins; ++b) data[b][rows] = data[b][rows - 1];
  data[bins] = data[bins - 1];
  return data;
}

// The cells in `frame`, over a grey background (the missing bins), x in axis units up to x_max.
void draw_cells(const std::vector<std::vector<PLFLT>>& data, const Box& frame, double x_max,
                double y_max, const ColourRange& range) {
  std::vector<const PLFLT*> columns;
  for (const auto& column : data) columns.push_back(column.data());
  plvpor(frame.x0, frame.x1, frame.y0, frame.y1);
  plwind(0, x_max, 0, y_max);
  const std::array<PLFLT, 4> bx = {0, x_max, x_max, 0};
  const std::array<PLFLT, 4> by = {0, 0, y_max, y_max};
  set_colour(Colour::Grid);
  plfill(4, bx.data(), by.data());
  // plimagefr, not plimage: plimage spreads the colours over the data's own range, not zmin..zmax.
  plimagefr(columns.data(), static_cast<PLINT>(data.size()), static_cast<PLINT>(data[0].size()), 0,
            x_max, 0, y_max, range.zmin, range.zmax, range.zmin, range.zmax, nullptr, nullptr);
}

// The statistics window's edges as dashed lines, in white: they cross dark and light cells
// alike.
void draw_window_edges(const analyze::Window& window, const TimeAxis& axis, double x_max,
                       double y_max) {
  set_colour(Colour::Background);
  pllsty(2);
  plwidth(2.5);
  for (double t : {window.start_s, window.end_s}) {
    const double x = t / axis.divisor;
    if (x <= 0 || x >= x_max) continue;
    const std::array<PLFLT, 2> xs = {x, x};
    const std::array<PLFLT, 2> ys = {0, y_max};
    plline(2, xs.data(), ys.data());
  }
  pllsty(1);
  plwidth(1.0);
}

// The frame with the time axis, and each row named by its GPU (or, with too many rows to name,
// numbered).
void draw_axes_and_rows(const analyze::Analysis& a, const PlotStream& stream,
                        const std::vector<std::size_t>& gpus, const TimeAxis& axis,
                        bool row_labels) {
  const std::size_t rows = gpus.size();
  text_size(stream, 15);
  set_colour(Colour::Ink);
  plbox("bcnst", 0, 0, row_labels ? "bc" : "bcnstv", 0, 0);
  plmtex("b", 2.6, 0.5, 0.5, axis.label.c_str());
  if (row_labels) {
    text_size(stream, rows > 20 ? 11 : 14);
    for (std::size_t r = 0; r < rows; ++r) {
      const double pos = 1.0 - (static_cast<double>(r) + 0.5) / static_cast<double>(rows);
      plmtex("lv", 0.8, pos, 1.0, gpu_label(a, gpus[r]).c_str());
    }
  } else {
    plmtex("l", 3.6, 0.5, 0.5, "GPU (row, from the bottom)");
  }
}

}  // namespace

PageText draw_heatmap_page(const analyze::Analysis& a, const PlotStream& stream,
                           std::optional<Metric> requested) {
  const std::optional<Metric> metric = choose_metric(a, requested);
  PageText page{
      metric ? fmt::format("Heatmap: {} per GPU over time", info(*metric).name) : "Heatmap", {}};
  pladv(0);
  const double h = stream.height();
  const double w = stream.width();

  const std::vector<std::size_t> gpus = gpus_with_series(a, metric);
  const std::size_t bins = a.gpu_grid_bins;
  const bool row_labels = gpus.size() <= kMaxRowLabels;
  const double left_px = row_labels ? 200 : 90;
  const Box frame{left_px / w, 1.0 - 150.0 / w, 80.0 / h, 1.0 - 110.0 / h};
  if (!metric || gpus.empty() || bins == 0 || a.gpu_grid_bin_s <= 0) {
    draw_empty_heatmap(a, stream, metric, frame, page);
    return page;
  }

  const DisplayUnit unit = display_unit(*metric);
  const ColourRange range = colour_range(a, gpus, *metric, unit);
  const std::string subtitle =
      fmt::format("{} · {:.3g} s per column · grey: no sample · dashed: statistics window",
                  info(*metric).description, a.gpu_grid_bin_s);
  draw_header(a, stream, page.title, subtitle);

  const TimeAxis axis = time_axis_for(static_cast<double>(bins) * a.gpu_grid_bin_s);
  const double x_max = static_cast<double>(bins) * a.gpu_grid_bin_s / axis.divisor;
  const double y_max = static_cast<double>(gpus.size());
  draw_cells(cell_corners(a, gpus, *metric, unit, range), frame, x_max, y_max, range);
  draw_window_edges(a.window, axis, x_max, y_max);
  draw_axes_and_rows(a, stream, gpus, axis, row_labels);
  colour_bar(stream, Box{1.0 - 120.0 / w, 1.0 - 95.0 / w, frame.y0, frame.y1}, range.zmin,
             range.zmax, unit.unit.empty() ? std::string(info(*metric).name) : unit.unit);
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    if (std::find(gpus.begin(), gpus.end(), i) == gpus.end()) {
      page.notes.push_back(fmt::format("{}: no {} series", gpu_label(a, i), info(*metric).name));
    }
  }
  return page;
}

}  // namespace gpuscope::report::plots
