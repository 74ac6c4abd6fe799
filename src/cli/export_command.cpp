// `gpuscope export --perfetto trace.json INPUT...`: run databases as Chrome trace-event JSON for
// ui.perfetto.dev (docs/export.md).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "app/gssr_import.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/metrics.hpp"
#include "core/output_file.hpp"
#include "trace/perfetto_export.hpp"
#include "util/output_file.hpp"

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;

struct ExportOptions {
  std::string perfetto;
  std::vector<std::string> inputs;
  std::vector<std::string> metrics;
  bool force = false;
  bool no_kernels = false;
};

// Files as given, directories as their *.db files in name order.
std::vector<fs::path> expand_inputs(const std::vector<std::string>& inputs) {
  std::vector<fs::path> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!fs::is_directory(input, ec)) {
      files.emplace_back(input);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(input, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".db")
        found.push_back(entry.path());
    }
    if (found.empty()) {
      throw Error::usage(fmt::format("{} holds no .db files", input), {},
                         "point at the directory gpuscope profile -o wrote");
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  // A file named twice (or by two spellings) is exported once.
  std::vector<fs::path> unique;
  for (const auto& file : files) {
    if (std::none_of(unique.begin(), unique.end(),
                     [&](const fs::path& earlier) { return util::same_file(earlier, file); })) {
      unique.push_back(file);
    }
  }
  return unique;
}

int run_export(const ExportOptions& o) {
  if (o.perfetto.empty()) {
    throw Error::usage("no output format", {},
                       "name the file to write: gpuscope export --perfetto trace.json run.db");
  }
  const fs::path output(o.perfetto);
  trace::PerfettoOptions options;
  options.kernels = !o.no_kernels;
  for (const std::string& name : o.metrics) {
    const auto metric = metric_by_name(name);
    if (!metric) {
      throw Error::usage(fmt::format("unknown metric '{}'", name), {},
                         "use the names of 'gpuscope analyze --help' or docs/database.md, e.g. "
                         "power_w,sm_active_pct");
    }
    options.metrics.push_back(*metric);
  }
  const app::ResolvedInputs resolved(o.inputs);  // gssr data: docs/gssr.md
  const std::vector<fs::path> inputs = expand_inputs(resolved.paths());

  // Checked before anything is read: only a regular file is replaced (with -f), never an
  // input; "-" is standard output.
  OutputCheck check;
  check.force = o.force;
  check.stdout_allowed = true;
  check.option = "--perfetto";
  for (const auto& input : inputs) check.inputs.push_back(input);
  const fs::path target = check_output_file(output, check);
  std::vector<char> buffer(1 << 20);
  trace::PerfettoSummary summary;
  if (target == "-") {
    std::cout.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    summary = trace::write_perfetto_trace(inputs, std::cout, options);
    std::cout.flush();
    if (!std::cout) throw Error("cannot write the trace to standard output", std::strerror(errno));
  } else {
    // Written under a temporary name beside the target and renamed, so a failed export
    // leaves no half a trace and an old trace stays intact until the new one is complete.
    util::AtomicFile file(target);
    open_output_file(file);
    {
      std::ofstream out(file.temporary(), std::ios::binary | std::ios::trunc);
      out.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      summary = trace::write_perfetto_trace(inputs, out, options);
      out.close();
      if (!out) throw_write_error(target, std::error_code(errno, std::generic_category()));
    }
    commit_output_file(file);
  }
  std::error_code ec;
  fmt::print(stderr,
             "gpuscope: wrote {} ({:.1f} MB: {} run{}, {} counter values, {} kernel and memory "
             "slices, {} phases, {} events); open it in https://ui.perfetto.dev\n",
             target == "-" ? std::string("the trace to standard output") : target.string(),
             target == "-" ? 0.0 : static_cast<double>(fs::file_size(target, ec)) / 1e6,
             summary.runs, summary.runs == 1 ? "" : "s", summary.counters,
             summary.slices - summary.phases, summary.phases, summary.instants);
  return 0;
}

}  // namespace

Command add_export_command(CLI::App& parent) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* app = parent.add_subcommand(
      "export", "Write run databases as a Chrome/Perfetto trace (JSON) for ui.perfetto.dev");
  app->add_option("--perfetto", o->perfetto,
                  "The trace-event JSON file to write: per-GPU counter tracks, kernels and "
                  "memcpy/memset as slices, events as instants")
      ->type_name("FILE");
  app->add_option(
         "inputs", o->inputs,
         "Run databases (or directories of them); merged ones too; gssr data (docs/gssr.md)")
      ->required()
      ->type_name("INPUT...");
  app->add_option("--metrics", o->metrics,
                  "Only these metrics' counter tracks (default: every metric with data)")
      ->delimiter(',')
      ->type_name("NAME,...");
  app->add_flag("--no-kernels", o->no_kernels, "Leave out the kernel and memcpy/memset slices");
  app->add_flag("-f,--force-overwrite,--force", o->force, "Overwrite the output file");
  return {app, [o] { return run_export(*o); }};
}

}  // namespace gpuscope::cli
