// `gpuscope kernels REPORT.sqlite...`: nsys's cuda_gpu_kern_sum and a memcpy/memset summary of
// Nsight Systems SQLite exports, summed over ranks or per rank (docs/kernels.md).
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "kernels/nsys_reader.hpp"
#include "kernels/output.hpp"

namespace gpuscope::cli {
namespace {

struct KernelsOptions {
  std::vector<std::string> inputs;
  std::string names = "demangled";
  std::size_t top = 0;
  bool json = false;
  bool csv = false;
  bool per_rank = false;
};

kernels::Summary summarize(const std::vector<const kernels::NsysExport*>& reports) {
  kernels::Summary summary;
  kernels::KernelDurations durations;
  kernels::MemoryOps memory;
  for (const kernels::NsysExport* report : reports) {
    summary.files.push_back(report->file.string());
    summary.notes.insert(summary.notes.end(), report->notes.begin(), report->notes.end());
    kernels::append(durations, report->kernels);
    kernels::append(memory, report->memory);
  }
  summary.kernels = kernels::kernel_summary(durations);
  summary.memory = kernels::memory_summary(memory);
  return summary;
}

int run_kernels(const KernelsOptions& o) {
  if (o.json && o.csv) throw Error::usage("--json and --csv cannot be combined");
  const kernels::NameColumn column =
      o.names == "short" ? kernels::NameColumn::short_name : kernels::NameColumn::demangled;
  std::vector<kernels::NsysExport> reports;
  for (const std::string& input : o.inputs) {
    reports.push_back(kernels::read_nsys_export(input, column));
  }
  for (const kernels::NsysExport& report : reports) {
    for (const std::string& note : report.notes) fmt::print(stderr, "gpuscope: note: {}\n", note);
  }

  std::vector<kernels::Summary> summaries;
  if (o.per_rank) {
    for (const kernels::NsysExport& report : reports) summaries.push_back(summarize({&report}));
  } else {
    std::vector<const kernels::NsysExport*> all;
    for (const kernels::NsysExport& report : reports) all.push_back(&report);
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

}  // namespace

Command add_kernels_command(CLI::App& parent) {
  auto o = std::make_shared<KernelsOptions>();
  CLI::App* app = parent.add_subcommand(
      "kernels",
      "Per-kernel time (nsys cuda_gpu_kern_sum) and memcpy/memset summary of Nsight Systems "
      "SQLite exports");
  app->add_option("inputs", o->inputs,
                  "nsys SQLite exports ('nsys export --type sqlite R.nsys-rep'), one per rank")
      ->required()
      ->type_name("REPORT.sqlite...");
  app->add_option("--name", o->names,
                  "Name kernels by their demangled name or nsys's short name (default demangled)")
      ->check(CLI::IsMember({"demangled", "short"}))
      ->type_name("demangled|short");
  app->add_option("--top", o->top, "Show only the N kernels with the most total time")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  app->add_flag("--per-rank", o->per_rank, "One summary per file instead of their sum");
  app->add_flag("--json", o->json, "Print JSON");
  app->add_flag("--csv", o->csv, "Print CSV");
  return {app, [o] { return run_kernels(*o); }};
}

}  // namespace gpuscope::cli
