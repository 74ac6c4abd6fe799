// The site's jobs of a period from SLURM's accounting, as `sacct` prints them (`--allusers
// --allocations --parsable2 --noheader`, a time window, the fields below): one record per
// allocation, array tasks and heterogeneous components each their own, GPU jobs told by their
// allocated GPUs (gres/gpu in AllocTRES). Pure text handling: running sacct is the caller's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/site_job.hpp"
#include "tsdb/series.hpp"

namespace gpuscope::fleet {

// The fields read_sacct_jobs expects, in this order. JobName is last: a '|' in a job's name
// then stays in the name instead of shifting the fields after it.
inline constexpr std::string_view kSacctJobsFields =
    "JobIDRaw,JobID,User,Account,Partition,State,Start,End,NodeList,AllocTRES,ExitCode,JobName";

// Who asks: narrows sacct's answer (sacct's own --user, --accounts, --partition, --state).
struct JobFilter {
  std::vector<std::string> users;
  std::vector<std::string> accounts;
  std::vector<std::string> partitions;
  std::vector<std::string> states;  // as sacct writes them: COMPLETED, FAILED, ...
};

// sacct's arguments for every job that ran during `window` (local times, as sacct reads them).
std::vector<std::string> sacct_jobs_arguments(const tsdb::Window& window, const JobFilter& filter);
// sacct's arguments for the job `job_id` alone, in the same fields.
std::vector<std::string> sacct_one_job_arguments(const std::string& job_id);

// What sacct says of one allocation: a SiteJob without figures.
struct SacctRead {
  std::vector<SiteJob> jobs;  // GPU jobs that started, in sacct's order
  // Of the lines read: allocations without GPUs, never started (pending, cancelled before they
  // ran), and lines that could not be read (each quoted in `unreadable`, the first 5).
  std::size_t without_gpus = 0;
  std::size_t not_started = 0;
  std::vector<std::string> unreadable;
  std::size_t unreadable_count = 0;
};

// The jobs in sacct's output. A running job's end is `now_ms`. Never throws for a line it
// cannot read: it is counted and quoted (a clear gap, never a job invented or dropped silently).
SacctRead read_sacct_jobs(std::string_view output, std::int64_t now_ms);

// The model of the allocated GPUs a typed gres names ("gres/gpu:h100=4" → "h100"); "" when the
// allocation is untyped or of several types.
std::string allocated_gpu_type(std::string_view tres);

}  // namespace gpuscope::fleet
