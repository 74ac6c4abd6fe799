// The job's GPU timelines written as runs: one per node, devices by UUID, the scheduler's job
// (or pod) and where the samples came from on each run (docs/jobs.md). A MIG instance is a device
// of its own and its GPU a device holding the power, energy and temperature the exporter repeats
// on each instance's series, once.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ingest/monitoring/job_series.hpp"
#include "ingest/monitoring/job_timeline.hpp"
#include "ingest/run_target.hpp"

namespace gpuscope::ingest {

// Writes one run per node with samples into `target` (nodes in the scheduler's order, then any
// other); `runs` gets the number written. Returns the sample rows written.
std::int64_t write_job_runs(const JobWindow& job, const JobSeries& js,
                            const std::map<std::string, GpuTimeline>& timelines,
                            const std::string& origin, double resolution_s, Notes& notes,
                            RunTarget& target, std::size_t& runs);

}  // namespace gpuscope::ingest
