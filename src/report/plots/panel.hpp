// One time-series panel: for each metric, the mean across GPUs as a line and the min–max across
// GPUs as a translucent band (Analysis::over_space), on a shared time axis with the trimmed edges
// shaded. Metrics without data are said, never drawn as zero.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyze/analysis.hpp"
#include "report/plots/draw.hpp"

namespace gpuscope::report::plots {

struct PanelLine {
  PanelLine(Metric m, std::string text) : metric(m), label(std::move(text)) {}
  Metric metric;
  std::string label;             // legend text: "SM active"
  bool band = true;              // the min–max band across GPUs
  bool dashed = false;           // limits and caps
  std::optional<Colour> colour;  // default: the next series colour
};

struct PanelSpec {
  PanelSpec(std::string text, std::vector<PanelLine> shown, bool is_percent = false)
      : title(std::move(text)), lines(std::move(shown)), percent(is_percent) {}
  std::string title;
  std::vector<PanelLine> lines;  // all in one display unit
  bool percent = false;          // y from 0 to 100 (or the maximum, if above)
  // A horizontal reference in display units (the memory total), with its legend text.
  std::optional<double> reference;
  std::string reference_label;
};

struct PanelContext {
  const analyze::Analysis& analysis;
  const PlotStream& stream;
  TimeAxis axis;
  double x_max = 1;  // axis units
  double font_px = 16;
};

// The time axis for `analysis`: its unit and extent.
PanelContext panel_context(const analyze::Analysis& analysis, const PlotStream& stream,
                           double font_px);

// Draws `spec` in `box` (page coordinates: the axes' frame; titles go above it, tick labels
// below and left; the time axis is named below when `x_labels`). Returns notes for what could not
// be drawn ("Clocks: not supported on this GPU"), which the page repeats in words.
std::vector<std::string> draw_panel(const PanelSpec& spec, const Box& box,
                                    const PanelContext& context, bool x_labels);

// The memory total of the GPUs (used + free + reserved, the largest over GPUs), if known.
std::optional<double> memory_total_bytes(const analyze::Analysis& analysis);

}  // namespace gpuscope::report::plots
