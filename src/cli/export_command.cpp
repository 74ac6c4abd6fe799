// `gpuscope export --perfetto trace.json INPUT...`: run databases as Chrome trace-event JSON for
// ui.perfetto.dev (docs/export.md).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/metrics.hpp"
#include "trace/perfetto_export.hpp"

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
  return files;
}

int run_export(const ExportOptions& o) {
  if (o.perfetto.empty()) {
    throw Error::usage("no output format", {},
                       "name the file to write: gpuscope export --perfetto trace.json run.db");
  }
  const fs::path output(o.perfetto);
  std::error_code ec;
  if (fs::is_directory(output, ec)) {
    throw Error::usage(fmt::format("{} is a directory", output.string()), {},
                       "name a file with --perfetto");
  }
  if (fs::exists(output, ec) && !o.force) {
    throw Error::usage(fmt::format("{} already exists", output.string()), {},
                       "pass -f to overwrite it, or choose another name");
  }
  const fs::path folder = output.parent_path();
  if (!folder.empty() && !fs::is_directory(folder, ec)) {
    throw Error::usage(fmt::format("folder {} does not exist", folder.string()), {},
                       "create it, or choose another place for --perfetto");
  }
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
  const std::vector<fs::path> inputs = expand_inputs(o.inputs);

  // Written beside the target and renamed, so a failed export leaves no half a trace.
  const fs::path partial = output.string() + ".partial";
  trace::PerfettoSummary summary;
  try {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error(fmt::format("cannot write {}", partial.string()), std::strerror(errno),
                  "check the directory is writable");
    }
    std::vector<char> buffer(1 << 20);
    out.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    summary = trace::write_perfetto_trace(inputs, out, options);
    out.close();
    if (!out) {
      throw Error(fmt::format("cannot write {}", output.string()), std::strerror(errno),
                  "check the disk has room");
    }
    fs::rename(partial, output, ec);
    if (ec) throw Error(fmt::format("cannot write {}", output.string()), ec.message());
  } catch (...) {
    fs::remove(partial, ec);
    throw;
  }
  fmt::print(stderr,
             "gpuscope: wrote {} ({:.1f} MB: {} run{}, {} counter values, {} kernel and memory "
             "slices, {} events); open it in https://ui.perfetto.dev\n",
             output.string(), static_cast<double>(fs::file_size(output, ec)) / 1e6, summary.runs,
             summary.runs == 1 ? "" : "s", summary.counters, summary.slices, summary.instants);
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
  app->add_option("inputs", o->inputs, "Run databases (or directories of them); merged ones too")
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
