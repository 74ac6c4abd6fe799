// Which GPU a row is, in a log with several GPUs and no GPU column (nvidia-smi --query-gpu
// without index or uuid): nvidia-smi prints one row per GPU per sampling tick, in a fixed order,
// their times a few milliseconds apart, the next tick about one interval later. The GPU count
// is read from that structure (or given, --log-gpus); where the structure does not say it
// clearly, nothing is guessed (docs/logs.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace gpuscope::ingest {

struct TickShape {
  unsigned gpus = 1;             // rows per tick
  std::int64_t interval_ns = 0;  // median time between ticks
  std::int64_t boundary_ns = 0;  // a gap longer than this starts a new tick
};

// The shape of the ticks the times `wall_ns` (of the log's first rows, in file order) show, or
// nullopt with `why` saying what was seen. `gpus`: the count the user gave, checked against the
// structure rather than inferred.
std::optional<TickShape> tick_shape(std::span<const std::int64_t> wall_ns,
                                    std::optional<unsigned> gpus, std::string& why);

// Assigns rows to GPUs by their position in their tick, row after row.
class TickCounter {
 public:
  explicit TickCounter(TickShape shape) : shape_(shape) {}
  // The GPU (0-based position) of the row at `wall_ns`; nullopt when the row would be a
  // (gpus+1)-th row of its tick, or when the tick before it held fewer rows than GPUs: which GPU
  // is missing cannot be told (`why` says so).
  std::optional<unsigned> next(std::int64_t wall_ns, std::string& why);
  const TickShape& shape() const { return shape_; }

 private:
  TickShape shape_;
  bool started_ = false;
  std::int64_t last_ns_ = 0;
  unsigned position_ = 0;
};

}  // namespace gpuscope::ingest
