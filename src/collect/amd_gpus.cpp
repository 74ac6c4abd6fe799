#include "collect/amd_gpus.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "collect/amd_describe.hpp"
#include "collect/amd_energy.hpp"
#include "collect/amd_reader.hpp"
#include "collect/gpu_selection.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"

namespace gpuscope::collect {
namespace {

class AmdControl final : public GpuControl {
 public:
  AmdControl(const amd::Device& device, unsigned index, std::optional<double> max_power_w)
      : device_(device), index_(index), uuid_(device.uuid().value_or("")), counter_(max_power_w) {}

  unsigned index() const override { return index_; }
  const std::string& uuid() const override { return uuid_; }

  ControlResult<PowerLimits> power_limits() const override {
    const auto cap = device_.power_cap();
    if (!cap) return tl::unexpected(failure(cap.error()));
    if (!cap->default_uw || !cap->min_uw || !cap->max_uw) {
      return tl::unexpected(ControlFailure{
          ControlProblem::Unsupported, "the library reports no range for the power cap", {}});
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
    const ControlProblem problem = kind == amd::FailureKind::Permission ? ControlProblem::Permission
                                   : kind == amd::FailureKind::Unsupported
                                       ? ControlProblem::Unsupported
                                       : ControlProblem::Other;
    return {problem, device_.describe(f), {}};
  }
  static ControlFailure no_lock() {
    return {ControlProblem::Unsupported,
            "gpuscope locks SM clocks on NVIDIA GPUs only; AMD GPUs are swept by power cap",
            "sweep AMD GPUs with --power-limits"};
  }

  const amd::Device& device_;
  unsigned index_;
  std::string uuid_;
  AmdEnergyCounter counter_;
};

}  // namespace

AmdGpus::AmdGpus(std::unique_ptr<amd::Session> session) : session_(std::move(session)) {}

void AmdGpus::describe(SystemDescription& system) const {
  system.amd = describe_amd(*session_, static_cast<unsigned>(gpu_count(system.devices)));
}

const amd::Device& AmdGpus::device_of(const DeviceDescription& d, const char* what) const {
  if (!d.vendor_index) throw Error(fmt::format("no AMD session for the AMD GPUs to {}", what));
  return *session_->devices().at(*d.vendor_index);
}

OpenedReaders AmdGpus::open_readers(const std::vector<unsigned>& indices,
                                    std::vector<DeviceDescription>& descriptions,
                                    const BackendOptions&, std::chrono::nanoseconds) const {
  OpenedReaders opened;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const DeviceDescription& d = descriptions[k];
    opened.readers.push_back(std::make_unique<AmdReader>(device_of(d, "sample"), d.index,
                                                         d.max_power_limit_w, opened.notes));
  }
  return opened;
}

std::optional<WatchedDevice> AmdGpus::watched(const DeviceDescription& d,
                                              const std::vector<DeviceDescription>&) const {
  if (!d.vendor_index) return std::nullopt;
  return WatchedDevice{d.index, amd_process_lister(*session_, *d.vendor_index)};
}

std::unique_ptr<GpuControl> AmdGpus::control(const DeviceDescription& d) const {
  return std::make_unique<AmdControl>(device_of(d, "set"), d.index, d.max_power_limit_w);
}

ProcessLister amd_process_lister(const amd::Session& session, unsigned vendor_index) {
  const amd::Device* device = session.devices().at(vendor_index).get();
  struct Seen {
    std::uint64_t gfx_ns = 0;
    std::int64_t mono_ns = 0;
  };
  auto last = std::make_shared<std::map<unsigned, Seen>>();
  return [device, last]() -> std::optional<std::vector<ListedProcess>> {
    // The counters were read somewhere inside the call: its midpoint is the best time for them
    // (a thread held up inside it, on a loaded node, then skews a share by half the delay).
    const std::int64_t asked = mono_now_ns();
    const auto processes = device->processes();
    if (!processes) return std::nullopt;
    const std::int64_t answered = mono_now_ns();
    const std::int64_t now = asked + (answered - asked) / 2;
    std::map<unsigned, Seen> seen;
    std::vector<ListedProcess> out;
    for (const auto& p : *processes) {
      ListedProcess listed{p.pid, p.memory_bytes, std::nullopt, std::nullopt};
      if (p.gfx_ns) {
        const auto before = last->find(p.pid);
        if (before != last->end() && now > before->second.mono_ns &&
            *p.gfx_ns >= before->second.gfx_ns) {
          listed.sm_percent = static_cast<double>(*p.gfx_ns - before->second.gfx_ns) * 100.0 /
                              static_cast<double>(now - before->second.mono_ns);
        }
        seen[p.pid] = {*p.gfx_ns, now};
      }
      out.push_back(listed);
    }
    *last = std::move(seen);  // processes gone are forgotten
    return out;
  };
}

}  // namespace gpuscope::collect
