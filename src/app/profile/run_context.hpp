// What every profiled run records about where it ran and how it ended, shared by `profile` and
// the trials of `sweep`.
#pragma once

#include <string>

#include "collect/sampler.hpp"
#include "core/run.hpp"
#include "launch/job.hpp"

namespace gpuscope::app {

// The host name up to its first dot ("localhost" when it cannot be read).
std::string short_host_name();

// The effective user's name (its uid when it has no passwd entry).
std::string user_name();

// The run's end as stored: status, exit code or signal, end times (now when the job result has
// none), samples taken, missed deadlines, and the problems of the job and of sampling in words.
RunEnd run_end(const launch::JobResult& result, const collect::SamplerStats& stats);

}  // namespace gpuscope::app
