// The few plain-text lines `gpuscope mail` adds to SLURM's end-of-job mail: the job's GPU
// summary from its site row, as `gpuscope jobs` and `gpuscope job ID --row` give it
// (docs/fleet.md, "The end-of-job mail").
#pragma once

#include <string>

#include "core/site_job.hpp"

namespace gpuscope::report {

// The summary of `job`'s GPUs: a heading, then one line per figure it has (GPUs, GPU-hours,
// utilization, peak memory, energy and CO2, score, flags, notes) and the command that gives the
// full analysis. ASCII but for what the job's row holds (its model, notes); ends with a newline.
std::string job_mail_summary(const SiteJob& job);

// The one line said instead when the summary could not be made: `why` on one line.
std::string job_mail_unavailable(const std::string& job_id, const std::string& why);

}  // namespace gpuscope::report
