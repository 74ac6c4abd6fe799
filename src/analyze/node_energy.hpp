// The node's energy beside the GPUs' (docs/node-energy.md): the CPU packages' (on
// Grace, the Grace sockets') and the memory's energy over the analysis' window, from each
// domain's running joules, the total with the GPUs', its carbon (a grid series joined reading by
// reading, as the GPUs' is), the same per phase, and the job's share of the node's CPU and memory
// energy estimated from its cgroup's CPU time. Pure: the caller (app/node_analysis) reads the
// rows and puts them on the analysis' time axis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/grid_intensity.hpp"
#include "core/node_energy.hpp"

namespace gpuscope::analyze {

// One domain's readings of one run, on the analysis' time axis.
struct NodeDomainSeries {
  std::string host;  // the run's node (what tells nodes apart in a merged analysis)
  std::size_t run = 0;
  NodeEnergyDomain domain;
  std::vector<double> t_s;
  std::vector<std::int64_t> wall_ns;
  std::vector<double> joules;  // running, only grows
};

// The CPU times a run recorded at the job's start and end.
struct NodeCpuShareInput {
  std::string host;
  std::size_t run = 0;
  std::vector<NodeCpuTime> times;
};

// A phase instance, for the per-phase figures.
struct NodePhaseSpan {
  std::string name;
  std::string source;
  std::size_t run = 0;
  double start_s = 0;
  double end_s = 0;
};

struct NodeEnergyInput {
  std::vector<NodeDomainSeries> domains;
  std::vector<NodeCpuShareInput> cpu_times;
  std::vector<NodePhaseSpan> phases;
  double window_start_s = 0;
  double window_end_s = 0;
  std::optional<double> gpu_j;              // the GPUs' energy over the window (the analysis')
  std::optional<double> gpu_carbon_g;       // and its carbon
  const IntensitySeries* series = nullptr;  // a grid series, or flat_g_per_kwh
  double flat_g_per_kwh = 0;
  double pue = 1;
  // Per phase name (and source): the GPUs' energy, as the phase report has it.
  std::vector<std::pair<std::string, std::optional<double>>> phase_gpu_j;
};

// What a domain counts as in the node's figures.
enum class NodeRole { Cpu, Dram, NotAdded };

struct NodeDomainFigure {
  std::string host;
  NodeEnergyDomain domain;
  NodeRole role = NodeRole::NotAdded;
  std::string why_not_added;     // "inside its package", "includes the GPU", ...
  std::optional<double> joules;  // over the window; none without two readings in it
  std::optional<double> mean_power_w;
};

struct NodePhaseEnergy {
  std::string name;
  std::string source;
  std::optional<double> gpu_j, cpu_j, dram_j, total_j;
};

struct NodeEnergy {
  std::vector<NodeDomainFigure> domains;
  std::optional<double> gpu_j;    // the GPUs', as the energy section has it
  std::optional<double> cpu_j;    // the node's packages (Grace sockets), all the node's work
  std::optional<double> dram_j;   // the node's memory (none on Grace: inside the socket's)
  std::optional<double> total_j;  // GPU + CPU + DRAM
  // ESTIMATE: the job's share of the node's CPU time (its cgroup's over the node's busy time,
  // start to end) and that share of the CPU and DRAM energy.
  std::optional<double> job_share;
  std::optional<double> job_cpu_dram_j;
  std::optional<double> node_carbon_g;   // CPU + DRAM
  std::optional<double> total_carbon_g;  // GPU + CPU + DRAM
  std::vector<NodePhaseEnergy> phases;
  std::vector<std::string> notes;
};

// The figures; nullopt when no run recorded a node energy domain.
std::optional<NodeEnergy> node_energy(const NodeEnergyInput& in);

// The joules of a running total in [a, b] (seconds), linearly interpolated between readings and
// clamped to them (energy outside the readings is unknown, never extrapolated); nullopt with fewer
// than two readings.
std::optional<double> joules_between(const std::vector<double>& t_s,
                                     const std::vector<double>& joules, double a, double b);

// "cpu", "dram", "not added".
const char* node_role_name(NodeRole role);

}  // namespace gpuscope::analyze
