// Which GPU a row is, in a log with several GPUs and no GPU column (nvidia-smi --query-gpu
// without index, uuid or bus id). nvidia-smi's loop queries every GPU in the same order (its
// index order) once per tick and prints one row each, then sleeps for the interval: the rows of
// a tick come close together (a loaded machine stretches some gaps to tens of milliseconds, and
// some rows share a millisecond), the next tick starts about an interval later. The evidence
// for the rows per tick (docs/logs.md, "How the GPUs of a log without a GPU column are told"):
//   - the times: for the right count, every tick's rows are closer together than the gaps that
//     bound the tick, and the ticks recur regularly;
//   - the rows' fixed facts (name, memory.total, serial, limits): a GPU's never change, so rows
//     a tick apart agree;
//   - the rows' levels (temperature, memory used): a GPU's change slowly, so where they repeat
//     every k rows and not from row to row, k rows belong to different GPUs.
// The count the user gave (--log-gpus) stands unless this evidence contradicts it. Where the
// evidence does not say, nothing is guessed: the log is refused with what was seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpuscope::ingest {

// What inference sees of a row.
struct TickRow {
  std::int64_t wall_ns = 0;
  std::size_t line = 0;                  // in the file, for messages
  std::vector<std::string> facts;        // the row's fixed facts; "" where absent ([N/A])
  std::vector<double> levels;            // slowly changing values; NaN where absent
  std::vector<std::string> level_names;  // for messages (the first row's only)
};

struct TickShape {
  unsigned gpus = 1;             // rows per tick
  unsigned first_position = 0;   // the first row's place in its tick (a log cut at its head)
  std::int64_t interval_ns = 0;  // median time from tick to tick
  bool timed = false;            // ticks stand apart in time: each tick is checked as it comes
  std::string evidence;          // what decided it, for the note
};

// The shape of the ticks of `rows` (the log's first rows, in file order), or nullopt with `why`
// saying what was seen. `gpus`: the count the user gave.
std::optional<TickShape> tick_shape(std::span<const TickRow> rows, std::optional<unsigned> gpus,
                                    std::string& why);

// Assigns rows to GPUs by their place in their tick, row after row, and checks each tick as it
// comes: a row missing or extra (a GPU gone, two logs interleaved) shifts every tick after it,
// which then straddle the gaps between ticks, or give a row another GPU's fixed facts.
class TickCounter {
 public:
  explicit TickCounter(TickShape shape);
  // The GPU (0-based place in the tick) of the row, or nullopt with `why` when the rows no
  // longer fall into ticks of the shape's size (`why` names the line the trouble began at,
  // from `line`).
  std::optional<unsigned> next(const TickRow& row, std::size_t line, std::string& why);
  // The rows end (the file, or a logger session before a repeated header): false with `why`
  // where the last ticks straddled the gaps around them, as shifted rows do.
  bool finish(std::string& why);
  // A new logger session begins (a header): the next row starts a tick. `keep_facts`: the
  // columns stay the same, so the GPUs' facts seen so far still hold.
  void restart(bool keep_facts);
  const TickShape& shape() const { return shape_; }
  // Ticks whose rows were spread wider than the gaps around them, tolerated as a loaded
  // machine's jitter (a shift shows in every tick after it).
  std::size_t jittered_ticks() const { return jittered_; }

 private:
  void close_tick(std::int64_t gap_after);

  TickShape shape_;
  bool started_ = false;
  std::int64_t last_ns_ = 0;
  unsigned position_ = 0;
  // The tick being read: the gap before it, its widest inner gap and its first line.
  std::int64_t gap_before_ = -1;
  std::int64_t inner_max_ = 0;
  std::size_t tick_line_ = 0;
  // The last closed tick, waiting for the gap after it.
  bool pending_ = false;
  std::int64_t pending_before_ = -1, pending_inner_ = 0;
  std::size_t pending_line_ = 0;
  unsigned straddling_ = 0;  // consecutive ticks spread wider than their bounds
  std::size_t straddle_line_ = 0;
  std::size_t jittered_ = 0;
  std::vector<std::vector<std::string>> facts_;  // by place: the facts first seen there
};

}  // namespace gpuscope::ingest
