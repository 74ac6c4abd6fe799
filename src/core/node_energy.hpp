// The node's own energy beside the GPUs' (docs/node-energy.md): the energy domains a
// run found (RAPL zones through Linux powercap, Grace / GH200 power meters through hwmon), their
// readings, and the CPU time the job's cgroup and the whole node used, as the run database keeps
// them (store/node_tables.hpp) and the analysis reads them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpuscope {

// Where a domain's figures come from.
inline constexpr const char* kNodeSourcePowercap = "powercap";       // energy_uj counters
inline constexpr const char* kNodeSourceGraceHwmon = "grace_hwmon";  // power meters, integrated

// One energy domain of the node, numbered within its run.
struct NodeEnergyDomain {
  unsigned domain = 0;  // its number in the run: readings name it
  std::string source;   // kNodeSourcePowercap or kNodeSourceGraceHwmon
  // The zone ("intel-rapl:0:1") or the meter ("hwmon3/power1").
  std::string zone;
  // The zone's `name` ("package-0", "dram") or the meter's label ("Grace Power Socket 0").
  std::string name;
  // powercap: package, core, uncore, dram, psys, other; Grace: module, grace, cpu, sysio.
  std::string kind;
  std::optional<unsigned> socket;
  // Whether the node's CPU-and-memory total adds it (packages and DRAM; Grace sockets): what
  // contains another domain, or is contained in one, is not added.
  bool additive = false;
  // Whether its energy includes the GPUs' (a GH200 module): never added to the GPUs' energy.
  bool includes_gpu = false;
  // Where a powercap counter wraps, in µJ (absent for a power meter, or unknown).
  std::optional<std::uint64_t> max_range_uj;
};

// One reading of a domain: its energy since the run's first reading of it, which only grows (a
// counter's wrap-arounds are unwrapped when read; a power meter's samples integrated).
struct NodeEnergySample {
  unsigned domain = 0;
  std::int64_t wall_ns = 0;
  std::int64_t mono_ns = 0;  // on the run's time axis, as the samples' mono_ns
  double joules = 0;
  std::optional<double> power_w;  // a power meter's reading (absent for a counter)
};

// The CPU time the job's cgroup and the node had used at one moment (read at the job's start and
// end): the job's share of the node's CPU time over the run is the estimate of its share of the
// node's CPU and memory energy.
struct NodeCpuTime {
  std::int64_t wall_ns = 0;
  std::int64_t mono_ns = 0;
  std::optional<std::string> cgroup;  // the job's cgroup (v2 path, "/slurm/job_12/step_0")
  std::optional<std::int64_t> cgroup_usage_usec;  // its cpu.stat usage_usec
  std::optional<std::int64_t> node_busy_usec;     // /proc/stat: all CPUs' non-idle time
  std::optional<std::int64_t> node_total_usec;    // /proc/stat: all CPUs' time
};

}  // namespace gpuscope
