// The kinds of Event (core/run.hpp), spelled once: an enum for code to compare, the word stored
// in the events table (docs/database.md) beside each. A word this gpuscope does not know (a newer
// one wrote the file) reads as Other and keeps its word, so it is still shown as it was stored.
#pragma once

#include <array>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace gpuscope {

class EventKind {
 public:
  enum Value {
    JobStart,       // the job was spawned
    JobExit,        // how it ended
    JobStop,        // the job was stopped (SIGSTOP, SIGTSTP, ...)
    JobContinue,    // and continued
    Signal,         // a signal gpuscope received or forwarded
    MaxRuntime,     // --max-runtime stopped the job
    ClockEvents,    // the GPU's clock-event reasons changed
    GpuLost,        // the GPU fell off the bus
    Gap,            // sampling missed its deadlines
    WriteError,     // the run database could not be written
    MetricsSource,  // a metric source (DCGM) lost or regained its counters or its connection
    Other,          // a word this gpuscope does not know
  };

  EventKind(Value value) : value_(value) {}  // NOLINT: implicit, as for an enum
  // The kind a stored word stands for; Other (keeping the word) when this gpuscope does not know
  // it.
  static EventKind parse(std::string_view word) {
    for (const auto& [value, text] : kWords) {
      if (text == word) return EventKind(value);
    }
    EventKind other(Other);
    other.other_ = std::string(word);
    return other;
  }

  Value value() const { return value_; }
  // The stored word: "job_start", "gpu_lost", ...
  std::string_view text() const {
    for (const auto& [value, text] : kWords) {
      if (value == value_) return text;
    }
    return other_;
  }
  bool operator==(Value value) const { return value_ == value; }
  bool operator==(const EventKind& other) const { return text() == other.text(); }

 private:
  static constexpr std::array<std::pair<Value, std::string_view>, 11> kWords = {{
      {JobStart, "job_start"},
      {JobExit, "job_exit"},
      {JobStop, "job_stop"},
      {JobContinue, "job_continue"},
      {Signal, "signal"},
      {MaxRuntime, "max_runtime"},
      {ClockEvents, "clock_events"},
      {GpuLost, "gpu_lost"},
      {Gap, "gap"},
      {WriteError, "write_error"},
      {MetricsSource, "metrics_source"},
  }};

  Value value_;
  std::string other_;
};

// Writes the stored word (for logs and test messages).
inline std::ostream& operator<<(std::ostream& out, const EventKind& kind) {
  return out << kind.text();
}

}  // namespace gpuscope
