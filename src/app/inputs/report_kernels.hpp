// The kernel lanes of `gpuscope report` from the kernel trace of its run databases
// (profile --trace-kernels; docs/report.md, "Kernels").
#pragma once

#include <optional>

#include "analyze/analysis.hpp"
#include "report/kernel_lanes.hpp"

namespace gpuscope::app {

// The kernels of every run of `analysis` on the report's time axis (seconds since t0_wall_ns),
// one lane per GPU; nullopt when no run has a kernel trace.
std::optional<report::KernelLanes> load_kernel_lanes(const analyze::Analysis& analysis);

}  // namespace gpuscope::app
