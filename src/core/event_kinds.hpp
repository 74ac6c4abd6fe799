// The kinds of Event (core/run.hpp), spelled once: the words stored in the events table
// (docs/database.md) and compared by whoever reacts to them.
#pragma once

namespace gpuscope::event_kind {

inline constexpr const char* kJobStart = "job_start";  // the job was spawned
inline constexpr const char* kJobExit = "job_exit";    // how it ended
inline constexpr const char* kSignal = "signal";       // a signal gpuscope received or forwarded
inline constexpr const char* kMaxRuntime = "max_runtime";  // --max-runtime stopped the job
inline constexpr const char* kClockEvents =
    "clock_events";                                  // the GPU's clock-event reasons changed
inline constexpr const char* kGpuLost = "gpu_lost";  // the GPU fell off the bus
inline constexpr const char* kGap = "gap";           // sampling missed its deadlines

}  // namespace gpuscope::event_kind
