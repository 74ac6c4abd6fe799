#include "app/inputs/plot_request.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <system_error>

#include "core/error.hpp"
#include "core/metrics.hpp"
#include "core/output_check.hpp"

namespace gpuscope::app {

namespace plots = report::plots;

plots::PlotOptions plot_options(const PlotRequest& request) {
  plots::PlotOptions options;
  options.format = plots::parse_plot_format(request.format);
  if (!request.size.empty()) {
    std::tie(options.width_px, options.height_px) = plots::parse_plot_size(request.size);
  }
  if (!request.heatmap_metric.empty()) {
    options.heatmap_metric = metric_by_name(request.heatmap_metric);
    if (!options.heatmap_metric) {
      throw Error::usage(fmt::format("unknown metric '{}'", request.heatmap_metric), {},
                         "use a metric name from docs/database.md, e.g. sm_active_pct");
    }
  }
  options.kinds = request.kinds;
  return options;
}

void check_plot_outputs(const PlotRequest& request) {
  OutputCheck check;
  check.force = request.force;
  check.inputs = request.inputs;
  check.option = request.rename_hint;
  for (const auto& file : plots::plot_files(request.prefix, plot_options(request))) {
    (void)check_output_file(file, check);
  }
}

void write_requested_plots(const analyze::Analysis& analysis, const PlotRequest& request) {
  for (const auto& file : plots::write_plots(analysis, request.prefix, plot_options(request))) {
    fmt::print(stderr, "gpuscope: wrote {}\n", file.string());
  }
}

std::filesystem::path default_plot_prefix(const std::string& input) {
  std::filesystem::path path(input);
  if (!path.has_filename()) path = path.parent_path();  // ranks/ → ranks
  const std::filesystem::path stem = path.stem();
  if (stem.empty() || stem == "." || stem == "..") return "gpuscope";
  return path.parent_path() / stem;
}

}  // namespace gpuscope::app
