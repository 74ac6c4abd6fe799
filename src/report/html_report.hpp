// `gpuscope report`: one self-contained HTML file (no network needed to view it) with the run's
// metadata, summary, diagnosis, timelines, heatmap, load balance, energy and per-GPU tables.
// uPlot and the report's own script and style are embedded from web/ at build time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "report/html_data.hpp"
#include "report/kernel_lanes.hpp"

namespace gpuscope::report {

struct HtmlReportOptions {
  std::string title;      // shown as the page title and heading; empty: a default
  std::string generator;  // "gpuscope 0.1.0 (abc123)", shown in the footer
  std::optional<KernelLanes> kernels = std::nullopt;  // lanes under the timelines (--trace-kernels)
  // Sections rendered beforehand (a sweep's, report/sweep_section.hpp), placed first.
  std::vector<std::string> sections_html = {};
  HtmlDataLimits limits = {};  // what bounds a big run's embedded data (tests make them small)
};

// The whole document. The analysis should carry per-GPU grids (AnalysisOptions::
// gpu_grid_metrics, see html_report_grid_metrics()) and marks for the full report; without them
// the per-GPU lines and heatmap say they are not available.
std::string html_report(const analyze::Analysis& analysis, const HtmlReportOptions& options);

// The metrics whose per-GPU series the report embeds (for its per-GPU lines and heatmap).
std::vector<Metric> html_report_grid_metrics();

// A script's text made safe inside <script>: "</script" (any case) would end the element early;
// "<\/script" means the same inside the strings and regexes where it can legally occur.
std::string script_safe(std::string text);

// Text safe inside HTML element content and attribute values.
std::string html_escape(std::string_view text);

}  // namespace gpuscope::report
