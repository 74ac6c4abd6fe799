// The CPU time the job's cgroup and the whole node have used, for the job's share of the node's
// CPU and memory energy (docs/node-energy.md, "The job's share"): the cgroup's cpu.stat
// usage_usec (cgroup v2) under <sysfs root>/fs/cgroup, and the node's busy time from
// <proc root>/stat, both read at the job's start and end.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/node_energy.hpp"

namespace gpuscope::node {

// The cgroup v2 path of process `pid` ("/slurm/job_12/step_0"): the "0::" line of
// <proc_root>/<pid>/cgroup, else of <proc_root>/self/cgroup (the job's own cgroup is gpuscope's
// under a batch system or a container); nullopt where neither has one (cgroup v1 only).
std::optional<std::string> cgroup_of(unsigned pid, const std::filesystem::path& proc_root);

// The node's and `cgroup`'s CPU time now (fields left absent where a file cannot be read).
NodeCpuTime read_cpu_time(const std::optional<std::string>& cgroup,
                          const std::filesystem::path& sysfs_root,
                          const std::filesystem::path& proc_root);

// The "cpu" line of /proc/stat's text as µs of busy and of total time; nullopt when malformed.
struct NodeTimes {
  std::int64_t busy_usec = 0;
  std::int64_t total_usec = 0;
};
std::optional<NodeTimes> parse_proc_stat(const std::string& text, long ticks_per_second);
// usage_usec of a cpu.stat text; nullopt when absent.
std::optional<std::int64_t> parse_cpu_stat_usage(const std::string& text);

}  // namespace gpuscope::node
