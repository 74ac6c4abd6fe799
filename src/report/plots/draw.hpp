// Drawing helpers over PLplot shared by the plot pages: one palette, text sized in pixels, lines
// that break at gaps, min–max bands, the time axis and the trimmed-window shading.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/analysis.hpp"
#include "report/plots/plot_stream.hpp"

namespace gpuscope::report::plots {

// Colour map 0 entries set by use_palette(); the band colours are the line colours, translucent.
enum class Colour : int {
  Background = 0,
  Ink = 1,      // axes and text
  Grid = 2,     // light grid lines
  Muted = 3,    // secondary text
  Trimmed = 4,  // translucent grey over the trimmed edges
  Straggler = 5,
  Limit = 6,      // power cap, memory total
  Invisible = 7,  // fully transparent: for laying text out before drawing it
  Series0 = 8,    // Series0 + i for i < kSeriesColours
  Band0 = 16,     // Band0 + i: Series0 + i at 25 % opacity
};
inline constexpr int kSeriesColours = 6;
Colour series_colour(std::size_t i);
Colour band_colour(std::size_t i);

// Sets colour map 0 (the palette above) and colour map 1 (a viridis-like ramp for heatmaps).
void use_palette();
void set_colour(Colour colour);

// A rectangle of the page in normalised coordinates (0..1, y up).
struct Box {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
};

// Text `px` pixels high (cap height as PLplot measures it) on `stream`'s page.
void text_size(const PlotStream& stream, double px);
// Text at page position (x, y) (0..1), justified 0 (left) .. 1 (right).
void page_text(double x, double y, double just, std::string_view text);

// How the time axis reads: seconds, minutes or hours depending on the run length.
struct TimeAxis {
  double divisor = 1;  // seconds per axis unit
  std::string label;   // "time since start (s)"
};
TimeAxis time_axis_for(double duration_s);

// Draws a polyline of (x, y), skipping NaN values and breaking where x jumps by more than
// `max_gap` (0: never breaks on x).
void draw_line(std::span<const double> x, std::span<const double> y, double max_gap);
// Fills between `low` and `high` over `x`, with the same breaks as draw_line.
void fill_band(std::span<const double> x, std::span<const double> low, std::span<const double> high,
               double max_gap);
// Shades the parts of [x0, x1] outside the analysis window, with a dashed line on the window's
// edge; the viewport and world coordinates must be set (x in axis units: seconds / `divisor`).
void shade_trimmed(const analyze::Window& window, double divisor, double x0, double x1, double y0,
                   double y1);
// A message centred in the current viewport (e.g. "not supported on this GPU").
void centred_message(std::string_view text);
// The frame with ticks, numbers and light grid lines in the current viewport and window.
void draw_axes();

// The display scale of a metric: bytes as GiB, rates as GB/s, everything else as stored.
struct DisplayUnit {
  double divisor = 1;
  std::string unit;  // "GiB", "GB/s", "W", "%", "MHz", "°C"
};
DisplayUnit display_unit(Metric metric);

// "nid0012 rank 3 GPU 1" when several runs are analysed together, else "GPU 1".
std::string gpu_label(const analyze::Analysis& analysis, std::size_t gpu);
// "this GPU" or "these GPUs".
std::string these_gpus(const analyze::Analysis& analysis);

}  // namespace gpuscope::report::plots
