// Static plots of an Analysis, drawn with PLplot's cairo drivers into PNG, SVG or PDF files:
// time series per metric group, load balance, a GPU × time heatmap and an iris-gpubench-style
// 3×2 overview (docs/plots.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/analysis.hpp"
#include "core/metrics.hpp"

namespace gpuscope::report::plots {

enum class PlotFormat { Png, Svg, Pdf };

// The four plots, in the order they are written.
enum class PlotKind { TimeSeries, LoadBalance, Heatmap, Overview };
inline constexpr PlotKind kAllPlots[] = {PlotKind::TimeSeries, PlotKind::LoadBalance,
                                         PlotKind::Heatmap, PlotKind::Overview};

struct PlotOptions {
  PlotFormat format = PlotFormat::Png;
  int width_px = 1600;  // points for PDF
  int height_px = 1000;
  // The heatmap's metric; default: SM active where kept, else GPU utilization, else the first
  // metric the Analysis keeps per GPU (analyze::AnalysisOptions::gpu_grid_metrics).
  std::optional<Metric> heatmap_metric;
  // Which plots to draw (in kAllPlots order whatever the order here); empty: all four.
  std::vector<PlotKind> kinds;
};

// "png", "svg" or "pdf" → the format; throws Error::usage otherwise.
PlotFormat parse_plot_format(std::string_view text);
// The file extension of a format, without the dot.
std::string_view extension(PlotFormat format);

// "WxH" in pixels (points for PDF), e.g. "1600x1000" → {1600, 1000}; throws Error::usage.
std::pair<int, int> parse_plot_size(std::string_view text);

// The per-GPU series the heatmap needs: pass them in analyze::AnalysisOptions::gpu_grid_metrics
// (the heatmap says so on its page when the Analysis lacks them).
std::vector<Metric> grid_metrics_for_plots(const PlotOptions& options);

// The files write_plots() would write for `output_prefix`, in order (to check before drawing
// that none would be overwritten).
std::vector<std::filesystem::path> plot_files(const std::filesystem::path& output_prefix,
                                              const PlotOptions& options);

// Writes the chosen plots of `analysis` and returns the files written, in this order:
// <prefix>-timeseries, -load-balance, -heatmap and -overview with the format's extension, or for
// PDF one file <prefix>.pdf with one page per plot. Each file is written under a temporary name
// and renamed when complete, so a failure never leaves a half-drawn plot. Throws Error when a
// file cannot be written, the size is unusable or PLplot lacks the cairo driver.
std::vector<std::filesystem::path> write_plots(const analyze::Analysis& analysis,
                                               const std::filesystem::path& output_prefix,
                                               const PlotOptions& options);

}  // namespace gpuscope::report::plots
