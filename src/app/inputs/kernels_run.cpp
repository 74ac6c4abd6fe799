#include "app/inputs/kernels_run.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "app/profile/kernel_tracing.hpp"
#include "core/error.hpp"
#include "ingest/tools/nsys_export.hpp"
#include "kernels/output.hpp"
#include "kernels/run_database.hpp"
#include "store/run_reader.hpp"
#include "trace/sidecar_reader.hpp"

namespace gpuscope::app {
namespace {

// Imports the trace directory profile left beside a run database (gpuscope was stopped before
// the end) into its last run.
void import_leftover_trace(const std::filesystem::path& database) {
  const std::filesystem::path dir = trace_dir_for(database);
  if (trace::sidecar_files(dir).empty()) {
    throw Error::usage(fmt::format("nothing to import for {}", database.string()),
                       fmt::format("{} holds no trace files", dir.string()),
                       "--import is for the trace of a profile that was stopped before the end");
  }
  const store::RunReader reader = store::RunReader::open(database);
  const auto runs = reader.runs();
  if (runs.empty()) throw Error::usage(database.string() + " holds no run");
  const store::StoredRun& run = runs.back();
  KernelTracing tracing;
  tracing.dir = dir;
  const auto problems = import_kernel_trace(
      tracing, database, run.run_id, reader.devices(run.run_id),
      run.info.start_wall_ns - run.info.start_mono_ns, run.end.end_mono_ns, false);
  for (const std::string& p : problems) fmt::print(stderr, "gpuscope: warning: {}\n", p);
}

// Each input's reports: an nsys export, or one per run of a run database.
std::vector<kernels::KernelReport> read_input(const std::string& input, kernels::NameColumn column,
                                              bool import) {
  if (!kernels::is_run_database(input)) {
    if (import) {
      throw Error::usage(fmt::format("--import is for run databases; {} is none", input), {},
                         "give the run database 'gpuscope profile --trace-kernels -o' wrote");
    }
    return {ingest::read_nsys_export(input, column)};
  }
  if (import) import_leftover_trace(input);
  auto reports = kernels::read_run_database(input, column);
  const auto leftover = trace::sidecar_files(trace_dir_for(input));
  if (!import && !leftover.empty() && !reports.empty()) {
    reports.front().notes.push_back(
        fmt::format("{}: {} holds {} trace files that were not imported (gpuscope was stopped "
                    "before the end); add --import to import them",
                    input, trace_dir_for(input).string(), leftover.size()));
  }
  return reports;
}

kernels::Summary summarize(const std::vector<const kernels::KernelReport*>& reports) {
  kernels::Summary summary;
  kernels::KernelDurations durations;
  kernels::MemoryOps memory;
  for (const kernels::KernelReport* report : reports) {
    summary.files.push_back(report->file.string());
    summary.notes.insert(summary.notes.end(), report->notes.begin(), report->notes.end());
    kernels::append(durations, report->kernels);
    kernels::append(memory, report->memory);
  }
  summary.kernels = kernels::kernel_summary(durations);
  summary.memory = kernels::memory_summary(memory);
  return summary;
}

}  // namespace

int run_kernels(const KernelsRun& o) {
  if (o.json && o.csv) throw Error::usage("--json and --csv cannot be combined");
  const kernels::NameColumn column =
      o.names == "short" ? kernels::NameColumn::ShortName : kernels::NameColumn::Demangled;
  std::vector<kernels::KernelReport> reports;
  for (const std::string& input : o.inputs) {
    for (auto& report : read_input(input, column, o.import)) reports.push_back(std::move(report));
  }
  for (const kernels::KernelReport& report : reports) {
    for (const std::string& note : report.notes) fmt::print(stderr, "gpuscope: note: {}\n", note);
  }

  std::vector<kernels::Summary> summaries;
  if (o.per_rank) {
    for (const kernels::KernelReport& report : reports) summaries.push_back(summarize({&report}));
  } else {
    std::vector<const kernels::KernelReport*> all;
    for (const kernels::KernelReport& report : reports) all.push_back(&report);
    summaries.push_back(summarize(all));
  }

  const kernels::OutputOptions view{o.top, o.names, o.per_rank};
  if (o.json) {
    fmt::print("{}", kernels::json_view(summaries, view));
  } else if (o.csv) {
    fmt::print("{}", kernels::csv_view(summaries, view));
  } else {
    fmt::print("{}", kernels::text_view(summaries, view));
  }
  return 0;
}

}  // namespace gpuscope::app
