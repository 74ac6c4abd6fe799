#include "cli/analysis_options.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <system_error>

#include "cli/number_option.hpp"
#include "core/error.hpp"
#include "core/metrics.hpp"
#include "core/output_check.hpp"

namespace gpuscope::cli {

namespace plots = report::plots;

void add_input_options(CLI::App& app, load::AnalyzeOptions& o) {
  app.add_option("inputs", o.inputs,
                 "Run databases, merged databases or directories of them; nvidia-smi and dcgmi "
                 "logs (docs/logs.md); gssr profile folders and exports (docs/gssr.md)")
      ->type_name("INPUT...");
  app.add_option("-i,--input", o.inputs, "Same as a positional INPUT (repeatable)")
      ->type_name("INPUT");
  add_read_options(app, o.read);
}

void add_read_options(CLI::App& app, ingest::ReadOptions& o) {
  const char* group = "Logs (docs/logs.md)";
  app.add_option("--input-format", o.format,
                 "Read inputs that are not run databases as this format: nvidia-smi-csv, "
                 "nvidia-smi-dmon, nvidia-smi-table, nvidia-smi-query, dcgmi-dmon, gssr "
                 "(default: recognised from the content)")
      ->type_name("NAME")
      ->group(group);
  app.add_option("--query-gpu", o.query_gpu,
                 "The fields of an nvidia-smi CSV written with noheader, as given to nvidia-smi "
                 "--query-gpu")
      ->type_name("FIELDS")
      ->group(group);
  app.add_option("--timezone", o.timezone,
                 "Zone of a log's local timestamps: Europe/Zurich, UTC, +02:00 (default: this "
                 "machine's zone)")
      ->type_name("ZONE")
      ->group(group);
  add_number_option(app, "--log-gpus", o.gpus, {1, 1024, "GPUs"},
                    "GPUs per sampling tick of a log without a GPU column (default: read from "
                    "the timestamps)")
      ->type_name("N")
      ->group(group);
  add_number_option(app, "--log-interval", o.interval_s, {0.001, 86400, "s"},
                    "Seconds between the ticks of a log without timestamps (nvidia-smi dmon -d, "
                    "dcgmi dmon -d in ms / 1000)")
      ->type_name("S")
      ->group(group);
  app.add_option("--log-start", o.start,
                 "Local time of the first tick of a log without dates, \"2026-11-25 22:40:11\" "
                 "(default: its last tick at the file's modification time)")
      ->type_name("TIME")
      ->group(group);
}

void add_analysis_options(CLI::App& app, load::AnalyzeOptions& o) {
  app.add_option("-d,--detect-outliers", o.trim,
                 "Leave idle edges out of the statistics: leading (default), trailing, all, none")
      ->type_name("MODE");
  add_number_option(app, "--carbon-intensity", o.carbon_intensity, kCarbonIntensity,
                    "Grid carbon intensity in gCO2e/kWh (default: --region's yearly average, "
                    "else the world average)")
      ->type_name("G");
  app.add_option("--region", o.region,
                 "Grid region for the carbon intensity (FR, US, DE, GB, ...; see "
                 "docs/analysis.md)")
      ->type_name("CODE");
  app.add_option("--carbon-series", o.carbon_series,
                 "The grid's carbon intensity over time, as your provider or facility publishes "
                 "it: a CSV or JSON file of (start, end or timestamp, gCO2e/kWh); carbon is then "
                 "each period's energy times its intensity (docs/analysis.md)")
      ->type_name("FILE");
  app.add_option("--carbon-source", o.carbon_source,
                 "Ask a grid API for the intensity of each period of the run: uk (the UK Carbon "
                 "Intensity API, no key) or electricitymaps (a token in ELECTRICITYMAPS_TOKEN or "
                 "--carbon-token-file); what it answers is stored in the run database")
      ->type_name("SOURCE");
  app.add_option("--carbon-region", o.carbon_region,
                 "The source's region: for uk GB (default), a region id or name (\"South "
                 "England\") or an outward postcode (RG10), list: the regions; for "
                 "electricitymaps the zone (DE, FR, US-CAL-CISO, ...)")
      ->type_name("REGION");
  app.add_option("--carbon-url", o.carbon_url,
                 "The grid API's base URL, for a mirror or proxy (default: the API's own; also "
                 "GPUSCOPE_CARBON_URL)")
      ->type_name("URL");
  app.add_option("--carbon-token-file", o.carbon_token_file,
                 "A file whose first line is the Electricity Maps token (else "
                 "ELECTRICITYMAPS_TOKEN); never give the token itself on the command line")
      ->type_name("FILE");
  app.add_flag("--carbon-refetch", o.carbon_refetch,
               "Ask the grid API again rather than use the figures the run database holds");
  // PUE is facility energy over IT energy: never below 1; real data centres are 1.05 to 3.
  add_number_option(app, "--pue", o.pue, {1, 5},
                    "Facility power usage effectiveness (default 1: GPUs only)")
      ->type_name("X");
  app.add_option("--work-regex", o.work_regex,
                 "Regex over the captured output whose first group is an amount of work done "
                 "(summed), e.g. 'processed ([0-9]+) tokens'; needs --capture-output at profile "
                 "time")
      ->type_name("REGEX");
  add_number_option(app, "--work-units", o.work_units, kWorkUnits,
                    "Total work the job did (e.g. tokens, images)")
      ->type_name("N");
  app.add_option("--work-name", o.work_name, "Name of a unit of work (default 'units')")
      ->type_name("NAME");
  add_number_option(app, "--straggler-threshold", o.straggler_threshold, {0, 1},
                    "How far below the median a GPU must be to be called a straggler (default "
                    "0.15)")
      ->type_name("FRACTION");
  app.add_option("--partial", o.partial_dir,
                 "Run as one of N tasks of a distributed analysis (srun -n N gpuscope analyze "
                 "--partial DIR runs/): each reads its share of the files, the tasks meet in "
                 "DIR (seen by all), task 0 prints the result, identical to one analyze "
                 "(docs/analysis.md)")
      ->type_name("DIR");
  app.add_option("--task", o.task,
                 "This task's number and the task count, R/N (default: from srun's or "
                 "mpirun's environment)")
      ->type_name("R/N");
  add_number_option(app, "--partial-timeout", o.partial_timeout_s, {1, 604'800, "s"},
                    "How long a task waits for another's file before giving up (default 3600)")
      ->type_name("SECONDS");
}

}  // namespace gpuscope::cli
