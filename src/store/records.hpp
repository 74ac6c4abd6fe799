// What the reader hands back: the core types of a run, tagged with the run they belong to (a
// merged database holds many runs).
#pragma once

#include <cstdint>
#include <string>

#include "core/run.hpp"

namespace gpuscope::store {

// One row of the runs table: the metadata the run started with and how it ended. While the
// run is going (or when gpuscope was killed) end.status is Running and the end fields are 0.
struct StoredRun {
  std::int64_t run_id = 0;
  RunInfo info;
  RunEnd end;
};

struct RunSample {
  std::int64_t run_id = 0;
  SampleRow row;
};

struct RunPowerSample {
  std::int64_t run_id = 0;
  PowerRow row;
};

struct RunEvent {
  std::int64_t run_id = 0;
  Event event;
};

struct RunOutputLine {
  std::int64_t run_id = 0;
  OutputLine line;
};

// One row of the metrics table, as stored (a database written by another gpuscope version may
// list metrics this build does not know).
struct StoredMetric {
  std::string name;
  std::string unit;
  std::string kind;     // "gauge", "counter", "bitmask"
  std::string storage;  // "REAL", "INTEGER"
  std::string source;
  std::string description;
};

}  // namespace gpuscope::store
