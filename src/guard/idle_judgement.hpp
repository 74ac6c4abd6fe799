// Whether a running job's GPUs sit idle, for how long, and what that earns it now: nothing, a
// first warning, a second, or a cancel (docs/guard.md, "How idleness is measured"). Pure: the
// figures come from the monitoring server, the memory of earlier cycles from guard's state
// database, and the same inputs always give the same verdict.
//
// A cycle looks at the job's GPUs over a window: from where the last cycle stopped to now (the
// first time, back to the longest step or the job's start). A GPU is idle over the window when
// every sample there is at or below the rule's activity, and it is covered when the server holds
// at least half the samples the exporters' scrape interval promises. The job is idle when at
// least the rule's share of its allocated GPUs is covered and idle; a window with too few
// samples says nothing (and ends any streak: guard never acts on a gap).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleet/gpu_aggregates.hpp"
#include "guard/rules.hpp"
#include "guard/running_jobs.hpp"
#include "store/guard_state.hpp"

namespace gpuscope::guard {

// What guard remembers of a job between cycles.
using JobMemory = store::GuardJobMemory;

// The job's GPUs over one window.
struct WindowFigures {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  int allocated = 0;                        // GPUs the job holds (squeue)
  std::size_t found = 0;                    // GPUs the server has samples of
  std::size_t covered = 0;                  // of those, with enough samples
  std::size_t idle = 0;                     // of those covered, idle throughout
  std::optional<double> mean_activity_pct;  // over the GPUs found
};

enum class Activity { Idle, Busy, Unknown };
enum class Step { None, FirstWarning, SecondWarning, Cancel };

struct IdleVerdict {
  Activity activity = Activity::Unknown;
  Step step = Step::None;
  bool interactive = false;
  std::optional<std::string> skipped;  // why the rule leaves the job alone (exempt, too young...)
  std::int64_t idle_s = 0;             // the streak's length now
  std::string why;                     // the figures in words, for notices and the audit
  WindowFigures window;                // what was judged
  JobMemory memory;                    // what to remember after this cycle
};

// Jobs an interactive limit applies to: no batch script, or a name the rule lists.
bool is_interactive(const IdleRule& rule, const RunningJob& job);

// Why the rule leaves `job` alone (exempt user, account, partition or QOS; a partition the
// rule does not watch; younger than min_age), or nullopt.
std::optional<std::string> exemption(const IdleRule& rule, const RunningJob& job,
                                     std::int64_t now_ms);

// The window a cycle asks the server about (never before the job's start). `max_gap_ms`: a last
// check further back than this starts over. `min_window_ms`: a window reaches at least this far
// back (a few scrape intervals), overlapping the last one, so that a cycle soon after another
// (a restart) still holds samples.
std::int64_t window_start(const IdleRule& rule, const RunningJob& job, const JobMemory& memory,
                          std::int64_t now_ms, std::int64_t max_gap_ms,
                          std::int64_t min_window_ms = 0);

// The window's figures from the server's per-GPU aggregates.
WindowFigures window_figures(std::span<const fleet::GpuAggregate> gpus, int allocated,
                             std::int64_t from_ms, std::int64_t to_ms,
                             std::int64_t sample_interval_s);

IdleVerdict judge_idle(const IdleRule& rule, const RunningJob& job, const JobMemory& memory,
                       const WindowFigures& window, std::int64_t now_ms);

// Whether the job's GPUs are too large for it so far: peak memory and mean activity over its
// whole run (aggregates from its start) both at most the rule's. The advice text, or nullopt.
std::optional<std::string> judge_too_large(const TooLargeRule& rule, const RunningJob& job,
                                           std::span<const fleet::GpuAggregate> gpus,
                                           std::int64_t now_ms);

std::string step_word(Step step);  // "first_warning", "second_warning", "cancel", "none"

}  // namespace gpuscope::guard
