// `gpuscope health-check` (docs/guard.md, "health-check"): the node's GPUs checked now, for
// Slurm's HealthCheckProgram, Prolog and Epilog. The GPUs come through the one GPU interface
// (NVIDIA and AMD alike); DCGM's diagnostic runs where the rules or --dcgm-diag ask and dcgmi is
// installed. Exit 0: healthy; 1: unhealthy (the reason on stdout, and with --drain the node
// drained with it, as a HealthCheckProgram must do itself); 3: the check could not be made
// (the diagnostic failed to run): said, never a drain.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "collect/backend.hpp"

namespace gpuscope::app {

struct HealthCheckOptions {
  collect::BackendOptions backend;
  std::string rules;                       // --rules FILE: its health section ("" the defaults)
  std::optional<std::size_t> expect_gpus;  // --expect-gpus N
  std::optional<int> dcgm_diag;            // --dcgm-diag LEVEL (else the rules', 0: none)
  bool json = false;
  bool drain = false;  // --drain: drain the node with the reason when unhealthy
  std::string node;    // --node (else SLURMD_NODENAME, else the short host name)
  // The commands, from PATH unless GPUSCOPE_DCGMI and GPUSCOPE_SCONTROL name others.
  std::string dcgmi = "dcgmi";
  std::string scontrol = "scontrol";
};

inline constexpr int kCheckUnhealthy = 1;
inline constexpr int kCheckNotMade = 3;

int run_health_check(HealthCheckOptions o);

}  // namespace gpuscope::app
