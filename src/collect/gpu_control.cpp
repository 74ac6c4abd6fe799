#include "collect/gpu_control.hpp"

#include <fmt/format.h>

#include <cmath>

#include "collect/amd_energy.hpp"
#include "collect/gpu_selection.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"

namespace gpuscope::collect {
namespace {

class NvidiaControl final : public GpuControl {
 public:
  NvidiaControl(nvml::Device device, unsigned index)
      : device_(std::move(device)), index_(index), uuid_(device_.uuid().value_or("")) {}

  unsigned index() const override { return index_; }
  const std::string& uuid() const override { return uuid_; }
  const char* vendor() const override { return "nvidia"; }

  ControlResult<PowerLimits> power_limits() const override {
    auto range = device_.power_limit_constraints_mw();
    auto current = device_.power_limit_mw();
    auto default_limit = device_.default_power_limit_mw();
    if (!range) return tl::unexpected(failure(range.error()));
    if (!current) return tl::unexpected(failure(current.error()));
    if (!default_limit) return tl::unexpected(failure(default_limit.error()));
    return PowerLimits{*current / 1000.0, *default_limit / 1000.0, range->min_mw / 1000.0,
                       range->max_mw / 1000.0};
  }

  ControlResult<void> set_power_limit_w(double watts) const override {
    return done(device_.set_power_limit_mw(static_cast<unsigned>(std::lround(watts * 1000))));
  }

  ControlResult<unsigned> max_sm_clock_mhz() const override {
    auto mhz = device_.max_clock_mhz(nvml::ClockType::Sm);
    if (!mhz) return tl::unexpected(failure(mhz.error()));
    return *mhz;
  }

  ControlResult<void> lock_sm_clock_mhz(unsigned mhz) const override {
    return done(device_.set_locked_clocks_mhz(mhz, mhz));
  }

  ControlResult<void> unlock_clocks() const override { return done(device_.reset_locked_clocks()); }

  std::optional<double> energy_mj() override {
    const auto mj = device_.total_energy_mj();
    return mj ? std::optional<double>(static_cast<double>(*mj)) : std::nullopt;
  }

 private:
  ControlFailure failure(const nvml::Failure& f) const {
    const ControlProblem problem =
        f.code == nvml::kErrorNoPermission ? ControlProblem::kPermission
        : f.code == nvml::kErrorNotSupported || f.code == nvml::kErrorFunctionNotFound
            ? ControlProblem::kUnsupported
            : ControlProblem::kOther;
    return {problem, device_.library().describe(f)};
  }
  ControlResult<void> done(const nvml::Status& status) const {
    if (status) return {};
    return tl::unexpected(failure(status.error()));
  }

  nvml::Device device_;
  unsigned index_;
  std::string uuid_;
};

class AmdControl final : public GpuControl {
 public:
  AmdControl(const amd::Device& device, unsigned index, std::optional<double> max_power_w)
      : device_(device), index_(index), uuid_(device.uuid().value_or("")), counter_(max_power_w) {}

  unsigned index() const override { return index_; }
  const std::string& uuid() const override { return uuid_; }
  const char* vendor() const override { return "amd"; }

  ControlResult<PowerLimits> power_limits() const override {
    const auto cap = device_.power_cap();
    if (!cap) return tl::unexpected(failure(cap.error()));
    if (!cap->default_uw || !cap->min_uw || !cap->max_uw) {
      return tl::unexpected(ControlFailure{ControlProblem::kUnsupported,
                                           "the library reports no range for the power cap"});
    }
    return PowerLimits{
        static_cast<double>(cap->current_uw) / 1e6, static_cast<double>(*cap->default_uw) / 1e6,
        static_cast<double>(*cap->min_uw) / 1e6, static_cast<double>(*cap->max_uw) / 1e6};
  }

  ControlResult<void> set_power_limit_w(double watts) const override {
    const auto status =
        device_.set_power_cap(static_cast<std::uint64_t>(std::llround(watts * 1e6)));
    if (status) return {};
    return tl::unexpected(failure(status.error()));
  }

  // AMD's libraries set clock ranges and performance levels, not one locked SM clock: `--clocks`
  // is NVIDIA's (docs/amd.md).
  ControlResult<unsigned> max_sm_clock_mhz() const override { return tl::unexpected(no_lock()); }
  ControlResult<void> lock_sm_clock_mhz(unsigned) const override {
    return tl::unexpected(no_lock());
  }
  ControlResult<void> unlock_clocks() const override { return tl::unexpected(no_lock()); }

  std::optional<double> energy_mj() override {
    const auto energy = device_.energy();
    if (!energy) return std::nullopt;
    const auto reading =
        counter_.add(energy->count, energy->resolution_uj, energy->timestamp_ns, mono_now_ns());
    return static_cast<double>(reading.energy_mj);
  }

 private:
  ControlFailure failure(const amd::Failure& f) const {
    const amd::FailureKind kind = device_.classify(f);
    const ControlProblem problem =
        kind == amd::FailureKind::kPermission    ? ControlProblem::kPermission
        : kind == amd::FailureKind::kUnsupported ? ControlProblem::kUnsupported
                                                 : ControlProblem::kOther;
    return {problem, device_.describe(f)};
  }
  static ControlFailure no_lock() {
    return {ControlProblem::kUnsupported,
            "gpuscope locks SM clocks on NVIDIA GPUs only; AMD GPUs are swept by power cap"};
  }

  const amd::Device& device_;
  unsigned index_;
  std::string uuid_;
  AmdEnergyCounter counter_;
};

std::unique_ptr<GpuControl> control_of(const NodeGpus& node, const DeviceDescription& d) {
  if (d.mig) {
    throw Error(fmt::format("device {} is a MIG device; settings are the whole GPU's", d.index));
  }
  if (d.vendor == "amd") {
    if (!node.amd || !d.vendor_index) throw Error("no AMD session for the AMD GPUs to set");
    return std::make_unique<AmdControl>(*node.amd->devices().at(*d.vendor_index), d.index,
                                        d.max_power_limit_w);
  }
  if (!node.nvml) throw Error("no NVML session for the NVIDIA GPUs to set");
  return std::make_unique<NvidiaControl>(node.nvml->device(d.index), d.index);
}

}  // namespace

GpuControls open_controls(const NodeGpus& node, const std::vector<unsigned>& indices) {
  GpuControls out;
  for (unsigned index : indices) {
    out.push_back(control_of(node, device_at(node.system.devices, index)));
  }
  return out;
}

GpuControls open_all_controls(const NodeGpus& node) {
  GpuControls out;
  for (const DeviceDescription& d : node.system.devices) {
    if (!d.mig && !d.error) out.push_back(control_of(node, d));
  }
  return out;
}

}  // namespace gpuscope::collect
