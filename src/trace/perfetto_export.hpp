// `gpuscope export --perfetto`: run databases as Chrome trace-event JSON (the JSON Object Format,
// {"traceEvents": [...], "displayTimeUnit": ...}) that ui.perfetto.dev and chrome://tracing open
// (docs/export.md): a process per run (host, rank), per-GPU counter tracks for every sampled
// metric that has data, kernels and memcpy/memset of `profile --trace-kernels` as complete slices
// on per-GPU, per-stream tracks, the run's phases as slices on a track per source, process and
// thread (above the kernels), the run's events as instants. Written as it is read: memory
// does not grow with the trace.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <vector>

#include "core/metrics.hpp"

namespace gpuscope::trace {

struct PerfettoOptions {
  std::vector<Metric> metrics;  // counter tracks to write; empty: every metric
  bool power_samples = true;    // the fast power cadence (--power-sampling-ms) as its own tracks
  bool kernels = true;
};

struct PerfettoSummary {
  std::int64_t runs = 0;
  std::int64_t counters = 0;    // "C" events
  std::int64_t slices = 0;      // "X" events (kernels, memory operations and phases)
  std::int64_t phases = 0;      // of those, phases (docs/phases.md)
  std::int64_t instants = 0;    // "i" events
  std::int64_t metadata = 0;    // "M" events
  std::int64_t t0_wall_ns = 0;  // ts 0 of the trace: the earliest run start (CLOCK_REALTIME)
};

// Writes the runs of `inputs` (run database files) to `out`. Timestamps are microseconds since
// the earliest run start, from each row's wall-clock time (so the ranks of several hosts line
// up). Throws gpuscope::Error (usage for an input that is no run database) before writing
// anything for a bad input, Error when reading fails midway.
PerfettoSummary write_perfetto_trace(const std::vector<std::filesystem::path>& inputs,
                                     std::ostream& out, const PerfettoOptions& options = {});

}  // namespace gpuscope::trace
