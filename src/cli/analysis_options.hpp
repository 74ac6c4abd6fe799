// The options `gpuscope analyze` and `gpuscope report` share (inputs, trimming, carbon, work,
// stragglers) and the static-plot output both offer: one registration, one meaning.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "app/inputs/plot_request.hpp"
#include "ingest/format.hpp"
#include "load/loader.hpp"
#include "report/plots/plots.hpp"

namespace gpuscope::cli {

// Registers INPUT... and -i on `app`, stored in `options.inputs`, and the read options.
void add_input_options(CLI::App& app, load::AnalyzeOptions& options);

// Registers what the user says about logs that cannot say it themselves (--input-format,
// --query-gpu, --timezone, --log-gpus, --log-interval, --log-start; docs/logs.md).
void add_read_options(CLI::App& app, ingest::ReadOptions& options);

// Registers -d, --carbon-intensity, --region, --pue, --work-regex, --work-units, --work-name
// and --straggler-threshold on `app`, stored in `options`.
void add_analysis_options(CLI::App& app, load::AnalyzeOptions& options);

}  // namespace gpuscope::cli
