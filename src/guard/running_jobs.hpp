// The running GPU jobs, as `squeue --json` prints them (slurmctld's own view, not the accounting
// database's): Slurm 20.11-22.05's OpenAPI v0.0.36-0.0.38 shape (plain numbers, a state word)
// and 23.02's and later data_parser shape (numbers as {"set", "infinite", "number"}, states as
// lists). A record that is neither is counted and quoted, never guessed at.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::guard {

struct RunningJob {
  std::string id;        // the job's own id (an array task's or het component's): the TSDB's label
  std::string shown_id;  // as squeue shows it: "123", "120_4", "130+1"
  std::string user;
  std::string account;
  std::string partition;
  std::string qos;
  std::string name;
  std::int64_t start_ms = 0;
  std::optional<std::int64_t> time_limit_s;  // absent: no limit
  std::vector<std::string> nodes;
  int gpus = 0;
  std::string gpu_model;  // the typed gres' model ("h100"), "" when untyped
  bool batch = true;      // false: an allocation (salloc, srun) with no batch script
};

struct SqueueRead {
  std::vector<RunningJob> jobs;  // running, with GPUs, in squeue's order
  std::string slurm_version;     // "22.05.8", from the answer's meta
  std::size_t not_running = 0;   // pending, completing, suspended...
  std::size_t without_gpus = 0;
  std::vector<std::string> unreadable;  // the first 5 records that could not be read, and why
  std::size_t unreadable_count = 0;
  std::vector<std::string> errors;  // what squeue itself put in "errors"
};

// The running GPU jobs in squeue's JSON. Throws Error when the text is not squeue's JSON at all;
// a record it cannot read is counted and quoted instead.
SqueueRead read_squeue_json(std::string_view text);

// squeue's arguments (its filters are ignored by 22.05's --json; 23.02 and later honour them).
std::vector<std::string> squeue_arguments();

}  // namespace gpuscope::guard
