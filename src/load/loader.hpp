// Run databases into an Analysis (docs/analysis.md), for `gpuscope analyze` and `gpuscope report`
// (app/analyze_run): the options checked, the runs opened (app/analysis_sources), the grid's
// intensity found (carbon/grid_source), the analyzer fed in two passes (app/analysis_passes)
// and what the runs hold beside samples added (app/analysis_extras).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "ingest/format.hpp"

namespace gpuscope::load {

struct AnalyzeOptions {
  std::vector<std::string> inputs;
  ingest::ReadOptions read;  // for logs that cannot say what they are (docs/logs.md)
  std::string trim = "leading";
  std::string aggregate = "summary";
  std::vector<std::string> metrics;
  double resolution_s = 0;
  bool json = false;
  bool csv = false;
  std::optional<double> carbon_intensity;
  std::optional<std::string> region;
  std::optional<std::string> carbon_series;  // --carbon-series FILE: the grid's intensity over time
  std::optional<std::string> carbon_source;  // --carbon-source uk|electricitymaps: a grid API
  std::string carbon_region;                 // --carbon-region: the source's region ("" national)
  std::optional<std::string> carbon_url;     // --carbon-url, else GPUSCOPE_CARBON_URL
  bool carbon_refetch = false;               // --carbon-refetch: ignore what the run holds
  std::optional<std::string> carbon_token_file;  // --carbon-token-file (Electricity Maps)
  double pue = 1.0;
  std::string work_regex;
  std::optional<double> work_units;
  std::string work_name = "units";
  double straggler_threshold = 0.15;
  bool no_color = false;
  // The distributed analysis (app/analysis_partial): --partial DIR, --task R/N (else from srun's
  // or mpirun's environment), --partial-timeout.
  std::optional<std::string> partial_dir;
  std::optional<std::string> task;
  double partial_timeout_s = 3600;
};

// The grid intensity API's base URL: --carbon-url, else GPUSCOPE_CARBON_URL, else "" (the
// source's own).
std::string carbon_url(const AnalyzeOptions& options);

// What the HTML report needs beyond analyze's figures.
struct LoadExtras {
  std::vector<Metric> gpu_grid_metrics;  // per-GPU series to keep (GpuReport::grid)
  std::size_t gpu_grid_bins = 300;
  bool marks = false;                   // job events and output lines as Analysis::marks
  std::size_t max_output_lines = 2000;  // output lines kept as marks, the earliest first
};

// Reads the run databases named in `options` and analyses them (two passes); throws Error
// (usage for bad input) as `gpuscope analyze` reports it.
analyze::Analysis load_analysis(const AnalyzeOptions& options, const LoadExtras& extras = {});

// One task of the distributed analysis (options.partial_dir set): reads its share of the files'
// samples, meets the other tasks in the directory, and on task 0 returns what load_analysis()
// of the same files returns, to the bit; nullopt on the other tasks.
std::optional<analyze::Analysis> load_analysis_task(const AnalyzeOptions& options,
                                                    const LoadExtras& extras = {});

}  // namespace gpuscope::load
