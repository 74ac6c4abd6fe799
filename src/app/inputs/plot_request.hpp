// Static plots (PNG, SVG, PDF) of an analysis, as `analyze --plot` and `report -o FILE.png`
// ask for them: what to draw, where, and the checks before anything is drawn.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "report/plots/plots.hpp"

namespace gpuscope::app {

// What to draw and where, from the command line.
struct PlotRequest {
  std::string format = "png";                  // png, svg, pdf
  std::string size;                            // "WxH", empty: the default
  std::string heatmap_metric;                  // a metric name, empty: the default choice
  std::vector<report::plots::PlotKind> kinds;  // empty: all four
  std::filesystem::path prefix;               // files are <prefix>-<plot>.<format>, or <prefix>.pdf
  bool force = false;                         // overwrite existing files
  std::string rename_hint = "-o";             // the option that names the files, for messages
  std::vector<std::filesystem::path> inputs;  // never overwritten (core/output_check.hpp)
};

// The PlotOptions a request stands for; throws Error::usage for a bad format, size or metric.
report::plots::PlotOptions plot_options(const PlotRequest& request);

// Checks every file the request would write (core/output_check.hpp: regular files only, never
// an input, -f to replace, folders created), so nothing is drawn before the user said so.
void check_plot_outputs(const PlotRequest& request);

// Draws the request's plots of `analysis` and says on stderr which files were written.
void write_requested_plots(const analyze::Analysis& analysis, const PlotRequest& request);

// The default plot prefix for an input: its path without the extension (run.db → run,
// ranks/ → ranks).
std::filesystem::path default_plot_prefix(const std::string& input);

}  // namespace gpuscope::app
