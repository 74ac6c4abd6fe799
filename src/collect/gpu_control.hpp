// The settings `sweep` changes on a GPU of either vendor (the power cap, locked SM clocks) and the
// energy counter it measures trials with, behind one interface: NVIDIA's through NVML, AMD's
// through AMD SMI or ROCm SMI (docs/sweep.md, docs/amd.md); a GPU's control comes from its vendor
// (collect/gpu_vendor.hpp), the node's from collect/node_gpus.hpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

namespace gpuscope::collect {

// Why a control call failed: the caller may not (run as root), the GPU cannot, or something else.
enum class ControlProblem { Permission, Unsupported, Other };

struct ControlFailure {
  ControlProblem problem = ControlProblem::Other;
  std::string words;  // the library's own words
  std::string fix;    // what to do instead, when the GPU cannot do it at all ("" for none)
};

template <typename T>
using ControlResult = tl::expected<T, ControlFailure>;

// A GPU's power limit and its range, watts.
struct PowerLimits {
  double current_w = 0;
  double default_w = 0;
  double min_w = 0;
  double max_w = 0;
};

class GpuControl {
 public:
  virtual ~GpuControl() = default;
  virtual unsigned index() const = 0;  // the GPU's index on the node (gpu_selection.hpp)
  virtual const std::string& uuid() const = 0;
  virtual ControlResult<PowerLimits> power_limits() const = 0;
  virtual ControlResult<void> set_power_limit_w(double watts) const = 0;
  virtual ControlResult<unsigned> max_sm_clock_mhz() const = 0;
  virtual ControlResult<void> lock_sm_clock_mhz(unsigned mhz) const = 0;
  virtual ControlResult<void> unlock_clocks() const = 0;
  // The GPU's energy counter, monotonic mJ (an AMD accumulator's wraps undone); nullopt when
  // it could not be read.
  virtual std::optional<double> energy_mj() = 0;
};

using GpuControls = std::vector<std::unique_ptr<GpuControl>>;

}  // namespace gpuscope::collect
