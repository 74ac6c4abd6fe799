// The four plot pages. Each draws on the current PLplot stream (a fresh page) and returns its
// title and what it could not draw, in words: write_plots() repeats them in the SVG's <desc>,
// since cairo draws text as outlines.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "report/plots/plot_stream.hpp"

namespace gpuscope::report::plots {

struct PageText {
  std::string title;
  std::vector<std::string> notes;
};

// Every metric group over time: mean across GPUs with the min–max band (4 × 2 panels).
PageText draw_time_series_page(const analyze::Analysis& analysis, const PlotStream& stream);
// iris-gpubench's 3 × 2 panel: power with the cap, utilization, temperature, memory with the
// total, SM clock, memory clock.
PageText draw_overview_page(const analyze::Analysis& analysis, const PlotStream& stream);
// Per-GPU time-averaged activity with its p5–p95 spread; stragglers in red, named.
PageText draw_load_balance_page(const analyze::Analysis& analysis, const PlotStream& stream);
// GPU × time heatmap of `metric` from GpuReport::grid (or the default choice when nullopt).
PageText draw_heatmap_page(const analyze::Analysis& analysis, const PlotStream& stream,
                           std::optional<Metric> metric);

// The page title and a line under it describing the run and the window.
void draw_header(const analyze::Analysis& analysis, const PlotStream& stream,
                 const std::string& title, const std::string& subtitle = {});

}  // namespace gpuscope::report::plots
