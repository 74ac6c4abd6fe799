// Turns the edges of phases (a begin, an end, a point) from marks and output lines into closed
// phases (core/phase.hpp), as they arrive, and says what did not pair up (docs/phases.md,
// "Unbalanced phases"):
//  - an end closes the most recent open phase of that name and source opened by the same
//    process, else by any process (a shell script's marks come from a new process each);
//  - an end that closes nothing is counted, never invented into a phase;
//  - a phase still open at the end (the job ended, its process died inside it) is closed there
//    with closed = false.
// Thread-safe: marks arrive on the receiver's thread, output lines on the job's. The callback runs
// without the tracker's lock, one call at a time, and may call the tracker itself.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/phase.hpp"

namespace gpuscope::phases {

struct PhaseEdge {
  PhaseSource source = PhaseSource::Mark;
  std::string name;
  std::string instance;
  std::optional<std::int64_t> pid;
  std::optional<std::int64_t> tid;
  std::int64_t mono_ns = 0;
};

class PhaseTracker {
 public:
  // Open phases held at most; past it a begin is dropped (and counted) rather than grow without
  // bound for a job that never ends what it begins.
  static constexpr std::size_t kMaxOpen = 65536;

  // `emit` gets each phase once it has closed, in closing order, one call at a time, without the
  // tracker's lock held (so it may call the tracker: what it closes follows once it returns). It
  // runs on the thread of a call that closed a phase: when another thread is already handing
  // phases on, the call returns at once and that thread hands this one on too. Once no call is
  // running, every phase closed so far has been handed on.
  explicit PhaseTracker(std::function<void(Phase)> emit);

  // Returns false when the begin was dropped (kMaxOpen phases are open).
  bool begin(const PhaseEdge& edge);
  // Returns false when nothing was open to close (counted in unmatched_ends()).
  bool end(const PhaseEdge& edge);
  void point(const PhaseEdge& edge);
  // Closes every phase of `source` named `name` that is open (output phases that follow one
  // another: the next epoch's begin ends the last one), at `mono_ns`. Returns how many.
  int end_all(PhaseSource source, const std::string& name, std::int64_t mono_ns);
  // Closes everything still open at `mono_ns`, as never closed (closed = false).
  void finish(std::int64_t mono_ns);

  std::int64_t open_count() const;
  std::int64_t emitted() const;
  // Ends that closed nothing, by name.
  std::map<std::string, std::int64_t> unmatched_ends() const;
  // Phases finish() closed, by name.
  std::map<std::string, std::int64_t> never_closed() const;
  // Sentences for the run's problems (empty when everything paired up).
  std::vector<std::string> problems() const;

 private:
  // Hands the closed phases on to emit_ (see the constructor), unlocking `lock` around each call.
  void emit_closed(std::unique_lock<std::mutex>& lock);

  std::function<void(Phase)> emit_;
  mutable std::mutex mutex_;
  std::vector<Phase> open_;   // in begin order
  std::deque<Phase> closed_;  // in closing order, not yet handed to emit_
  bool emitting_ = false;     // a thread is in emit_closed
  std::int64_t emitted_ = 0;  // handed to emit_
  std::map<std::string, std::int64_t> unmatched_;
  std::map<std::string, std::int64_t> never_closed_;
  std::int64_t dropped_begins_ = 0;
};

}  // namespace gpuscope::phases
