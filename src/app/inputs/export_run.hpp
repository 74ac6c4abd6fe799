// `gpuscope export --perfetto`: run databases (and foreign inputs, through the ingest layer) as
// Chrome trace-event JSON for ui.perfetto.dev (docs/export.md).
#pragma once

#include <string>
#include <vector>

#include "ingest/format.hpp"

namespace gpuscope::app {

struct ExportRun {
  std::string perfetto;  // the file to write; "-" is standard output
  std::vector<std::string> inputs;
  ingest::ReadOptions read;
  std::vector<std::string> metrics;  // only these counter tracks (default: every one with data)
  bool force = false;
  bool no_kernels = false;
};

// Writes the trace; returns the exit code. Throws Error (usage for bad options or input); an
// existing output is replaced only when complete.
int run_export(const ExportRun& o);

}  // namespace gpuscope::app
