// The phases of a run (docs/phases.md): the named parts of the job's time (data loading, forward,
// a training step, an epoch, checkpointing) that analyze gives energy, time and saturation to.
// Plain data between phases/ and trace/ (which make them from marks, output lines and NVTX
// ranges), store/ (the phases table) and analyze/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope {

// Where a phase came from.
enum class PhaseSource {
  Nvtx,    // an NVTX range (push/pop or start/end) or mark, through CUPTI (--trace-nvtx)
  Mark,    // `gpuscope mark` or a job's own line on the stream socket GPUSCOPE_MARK_SOCKET
  Output,  // a line of the job's output matching a --phase pattern
};

std::string_view to_text(PhaseSource source);
std::optional<PhaseSource> phase_source_from_text(std::string_view text);

struct Phase {
  PhaseSource source = PhaseSource::Mark;
  std::string name;      // what phases are grouped by ("forward", "epoch")
  std::string instance;  // which one, when the source says ("17" of step 17); may be empty
  std::string domain;    // the NVTX domain; empty for the default domain and other sources
  std::optional<std::uint32_t> category;  // the NVTX category, when set
  std::optional<std::int64_t> pid;        // the process that opened it (not for output phases)
  std::optional<std::int64_t> tid;        // its thread, when known
  // CLOCK_MONOTONIC, ns: the clock of the samples. A point (an instant mark) has end == start.
  std::int64_t start_mono_ns = 0;
  std::int64_t end_mono_ns = 0;
  bool point = false;
  // false: never closed; the end is when its process or the job ended (or gpuscope stopped).
  bool closed = true;
  // The GPU (the run's device_index) it belongs to, when the source knows; else every GPU of
  // the run.
  std::optional<unsigned> device_index;
};

inline std::string_view to_text(PhaseSource source) {
  switch (source) {
    case PhaseSource::Nvtx:
      return "nvtx";
    case PhaseSource::Mark:
      return "mark";
    case PhaseSource::Output:
      return "output";
  }
  return "mark";
}

inline std::optional<PhaseSource> phase_source_from_text(std::string_view text) {
  if (text == "nvtx") return PhaseSource::Nvtx;
  if (text == "mark") return PhaseSource::Mark;
  if (text == "output") return PhaseSource::Output;
  return std::nullopt;
}

}  // namespace gpuscope
