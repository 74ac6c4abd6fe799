#include "app/inputs/export_run.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/error.hpp"
#include "core/metrics.hpp"
#include "core/output_check.hpp"
#include "ingest/import.hpp"
#include "trace/perfetto_export.hpp"
#include "util/output_file.hpp"

namespace gpuscope::app {

namespace fs = std::filesystem;

int run_export(const ExportRun& o) {
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
  // Foreign inputs through a temporary run database (docs/gssr.md), run databases as they are.
  const ingest::RunInputs resolved(o.inputs, o.read);
  std::vector<std::string> notes = resolved.notes();
  const std::vector<fs::path> inputs = ingest::expand_run_databases(resolved.paths(), notes);
  for (const auto& note : notes) fmt::print(stderr, "gpuscope: note: {}\n", note);

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

}  // namespace gpuscope::app
