// A SLURM job's window and nodes from the accounting database, as `sacct` prints them
// (`--parsable2 --noheader --allocations`): the job's start and end (local time, "Unknown" while
// it runs), its node list in SLURM's compressed host-list form (n[1-4,7]), and its allocated
// trackable resources (gres/gpu=N). Pure text handling: running sacct is the caller's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/monitoring/monitoring.hpp"

namespace gpuscope::ingest {

// The fields read_sacct_job expects, in this order: sacct -j ID -X -n -P -o <these>.
inline constexpr std::string_view kSacctJobFields =
    "JobIDRaw,JobName,User,State,Start,End,Elapsed,NodeList,AllocTRES,AllocCPUS,ExitCode";
// The fields read_sacct_overlaps expects: the jobs of some nodes over a window.
inline constexpr std::string_view kSacctOverlapFields = "JobIDRaw,NodeList,Start,End,State";

// sacct's arguments (after the program's name) for the job `job_id`.
std::vector<std::string> sacct_job_arguments(const std::string& job_id);
// sacct's arguments for every job that ran on `nodes` during `window`.
std::vector<std::string> sacct_overlap_arguments(const std::vector<std::string>& nodes,
                                                 const tsdb::Window& window);

// The job `job_id` from sacct's output; `now_ms` ends the window of a running job. Throws
// Error when the output has no such job, the job never started (pending, cancelled before it
// ran), or its fields cannot be read (the message quotes the line).
JobWindow read_sacct_job(std::string_view output, const std::string& job_id, std::int64_t now_ms);

// The ids of the jobs other than `job_id` in sacct's overlap output (steps left out).
std::vector<std::string> read_sacct_overlaps(std::string_view output, const std::string& job_id);

// SLURM's host list expanded: "n[1-3,7],gpu-[01-02]x" → n1 n2 n3 n7 gpu-01x gpu-02x (zero
// padding kept, several bracket groups in one name multiplied out). Throws Error on a malformed
// list, and above 100 000 names.
std::vector<std::string> expand_hostlist(std::string_view list);

// The GPUs an allocation's trackable resources (AllocTRES: "cpu=8,gres/gpu=4,node=1") hold: the
// untyped gres/gpu count, else the typed counts (gres/gpu:a100=2) added; nullopt when none.
std::optional<int> allocated_gpus(std::string_view tres);

// sacct's time (2026-11-25T22:40:11, the local time zone as sacct prints it) as Unix ms; nullopt
// for "Unknown", "None" and empty.
std::optional<std::int64_t> sacct_time_ms(std::string_view text);

}  // namespace gpuscope::ingest
