#include "report/plots/draw.hpp"

#include <fmt/format.h>
#include <plplot.h>

#include <array>
#include <cmath>

namespace gpuscope::report::plots {
namespace {

struct Rgb {
  int r, g, b;
};

// Tableau-like: distinguishable, and readable by most colour-blind people in pairs.
constexpr std::array<Rgb, kSeriesColours> kSeries = {{
    {31, 119, 180},   // blue
    {255, 127, 14},   // orange
    {44, 160, 44},    // green
    {148, 103, 189},  // purple
    {140, 86, 75},    // brown
    {23, 190, 207},   // cyan
}};

int index(Colour colour) {
  return static_cast<int>(colour);
}

}  // namespace

Colour series_colour(std::size_t i) {
  return static_cast<Colour>(index(Colour::Series0) + static_cast<int>(i % kSeriesColours));
}

Colour band_colour(std::size_t i) {
  return static_cast<Colour>(index(Colour::Band0) + static_cast<int>(i % kSeriesColours));
}

void use_palette() {
  plscmap0n(index(Colour::Band0) + kSeriesColours);
  plscol0a(index(Colour::Background), 255, 255, 255, 1.0);
  plscol0a(index(Colour::Ink), 30, 30, 30, 1.0);
  plscol0a(index(Colour::Grid), 225, 225, 225, 1.0);
  plscol0a(index(Colour::Muted), 110, 110, 110, 1.0);
  plscol0a(index(Colour::Trimmed), 120, 120, 120, 0.18);
  plscol0a(index(Colour::Straggler), 214, 39, 40, 1.0);
  plscol0a(index(Colour::Limit), 180, 20, 20, 1.0);
  plscol0a(index(Colour::Invisible), 255, 255, 255, 0.0);
  for (std::size_t i = 0; i < kSeries.size(); ++i) {
    const Rgb c = kSeries[i];
    plscol0a(index(series_colour(i)), c.r, c.g, c.b, 1.0);
    plscol0a(index(band_colour(i)), c.r, c.g, c.b, 0.22);
  }
  // Viridis, sampled: perceptually even and still ordered in grey.
  constexpr std::array<PLFLT, 5> at = {0.0, 0.25, 0.5, 0.75, 1.0};
  constexpr std::array<PLFLT, 5> r = {0.267, 0.229, 0.128, 0.369, 0.993};
  constexpr std::array<PLFLT, 5> g = {0.005, 0.322, 0.567, 0.789, 0.906};
  constexpr std::array<PLFLT, 5> b = {0.329, 0.546, 0.551, 0.383, 0.144};
  plscmap1n(256);
  plscmap1l(1, static_cast<PLINT>(at.size()), at.data(), r.data(), g.data(), b.data(), nullptr);
}

void set_colour(Colour colour) {
  plcol0(index(colour));
}

void text_size(const PlotStream& stream, double px) {
  plschr(stream.mm(px), 1.0);
}

void page_text(double x, double y, double just, std::string_view text) {
  // plmtex needs a viewport: use the whole page for page-level text.
  plvpor(0, 1, 0, 1);
  plwind(0, 1, 0, 1);
  plptex(x, y, 1, 0, just, std::string(text).c_str());
}

TimeAxis time_axis_for(double duration_s) {
  if (duration_s <= 900) return {1, "time since start (s)"};
  if (duration_s <= 6 * 3600) return {60, "time since start (min)"};
  return {3600, "time since start (h)"};
}

namespace {

// Calls `segment(begin, end)` for each run of points [begin, end) without NaN in `y` (and in
// `y2` when given) and without a jump in x larger than `max_gap`.
template <typename Segment>
void for_each_segment(std::span<const double> x, std::span<const double> y,
                      std::span<const double> y2, double max_gap, Segment segment) {
  const std::size_t n = std::min(x.size(), y.size());
  std::size_t begin = 0;
  auto bad = [&](std::size_t i) {
    return std::isnan(x[i]) || std::isnan(y[i]) || (!y2.empty() && std::isnan(y2[i]));
  };
  while (begin < n) {
    while (begin < n && bad(begin)) ++begin;
    std::size_t end = begin;
    while (end < n && !bad(end) &&
           (end == begin || max_gap <= 0 || x[end] - x[end - 1] <= max_gap)) {
      ++end;
    }
    if (end > begin) segment(begin, end);
    begin = end;
  }
}

}  // namespace

void draw_line(std::span<const double> x, std::span<const double> y, double max_gap) {
  for_each_segment(x, y, {}, max_gap, [&](std::size_t begin, std::size_t end) {
    if (end - begin == 1) {
      plstring(1, &x[begin], &y[begin], "•");
    } else {
      plline(static_cast<PLINT>(end - begin), &x[begin], &y[begin]);
    }
  });
}

void fill_band(std::span<const double> x, std::span<const double> low, std::span<const double> high,
               double max_gap) {
  std::vector<PLFLT> px, py;
  for_each_segment(x, low, high, max_gap, [&](std::size_t begin, std::size_t end) {
    if (end - begin < 2) return;
    px.clear();
    py.clear();
    for (std::size_t i = begin; i < end; ++i) {
      px.push_back(x[i]);
      py.push_back(high[i]);
    }
    for (std::size_t i = end; i-- > begin;) {
      px.push_back(x[i]);
      py.push_back(low[i]);
    }
    plfill(static_cast<PLINT>(px.size()), px.data(), py.data());
  });
}

void shade_trimmed(const analyze::Window& window, double divisor, double x0, double x1, double y0,
                   double y1) {
  auto shade = [&](double a, double b, double edge) {
    if (b <= a) return;
    const std::array<PLFLT, 4> xs = {a, b, b, a};
    const std::array<PLFLT, 4> ys = {y0, y0, y1, y1};
    set_colour(Colour::Trimmed);
    plfill(4, xs.data(), ys.data());
    const std::array<PLFLT, 2> ex = {edge, edge};
    const std::array<PLFLT, 2> ey = {y0, y1};
    set_colour(Colour::Muted);
    pllsty(3);
    plline(2, ex.data(), ey.data());
    pllsty(1);
  };
  if (window.leading_trimmed_s > 0) {
    const double edge = std::min(x1, window.start_s / divisor);
    shade(x0, edge, edge);
  }
  if (window.trailing_trimmed_s > 0) {
    const double edge = std::max(x0, window.end_s / divisor);
    shade(edge, x1, edge);
  }
}

void centred_message(std::string_view text) {
  plwind(0, 1, 0, 1);
  set_colour(Colour::Muted);
  plptex(0.5, 0.5, 1, 0, 0.5, std::string(text).c_str());
}

void draw_axes() {
  set_colour(Colour::Grid);
  plwidth(1.0);
  plbox("g", 0, 0, "g", 0, 0);
  set_colour(Colour::Ink);
  plwidth(1.2);
  plbox("bcnst", 0, 0, "bcnstv", 0, 0);
  plwidth(1.0);
}

DisplayUnit display_unit(Metric metric) {
  const std::string_view unit = info(metric).unit;
  if (unit == "B") return {1024.0 * 1024.0 * 1024.0, "GiB"};
  if (unit == "B/s") return {1e9, "GB/s"};
  return {1, std::string(unit)};
}

std::string gpu_label(const analyze::Analysis& analysis, std::size_t gpu) {
  return analysis.gpus.at(gpu).key.label(analysis.runs.size() > 1);
}

std::string these_gpus(const analyze::Analysis& analysis) {
  return analysis.gpus.size() > 1 ? "these GPUs" : "this GPU";
}

}  // namespace gpuscope::report::plots
