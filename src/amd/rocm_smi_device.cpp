#include <fmt/format.h>

#include <algorithm>

#include "amd/devices.hpp"

namespace gpuscope::amd {
namespace {

using Table = RocmSmiApi::Table;

class RocmSmiDevice final : public Device {
 public:
  RocmSmiDevice(std::shared_ptr<const RocmSmiLibrary> library, std::uint32_t index)
      : library_(std::move(library)), index_(index) {}

  Expected<std::string> name() const override {
    char text[256] = {};
    if (auto s = library_->call(&Table::DevNameGet, index_, text, sizeof text); !s) {
      return tl::unexpected(s.error());
    }
    text[sizeof text - 1] = '\0';
    return std::string(text);
  }

  Expected<std::string> uuid() const override {
    std::uint64_t id = 0;
    if (auto s = library_->call(&Table::DevUniqueIdGet, index_, &id); !s) {
      return tl::unexpected(s.error());
    }
    return fmt::format("{:016x}", id);
  }

  // BDFID: domain in bits 32-63, bus 8-15, device 3-7, function 0-2 (rocm_smi.h).
  Expected<std::string> pci_bus_id() const override {
    std::uint64_t v = 0;
    if (auto s = library_->call(&Table::DevPciIdGet, index_, &v); !s) {
      return tl::unexpected(s.error());
    }
    return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", v >> 32U, (v >> 8U) & 0xFFU, (v >> 3U) & 0x1FU,
                       v & 0x7U);
  }

  Expected<std::uint64_t> memory_total_bytes() const override {
    return library_->read<std::uint64_t>(&Table::DevMemoryTotalGet, index_, kRsmiMemVram);
  }

  Expected<std::uint64_t> memory_used_bytes() const override {
    return library_->read<std::uint64_t>(&Table::DevMemoryUsageGet, index_, kRsmiMemVram);
  }

  Expected<PowerCap> power_cap() const override {
    PowerCap cap;
    if (auto s = library_->call(&Table::DevPowerCapGet, index_, 0U, &cap.current_uw); !s) {
      return tl::unexpected(s.error());
    }
    std::uint64_t value = 0;
    if (library_->call(&Table::DevPowerCapDefaultGet, index_, &value)) cap.default_uw = value;
    std::uint64_t max = 0;
    std::uint64_t min = 0;
    if (library_->call(&Table::DevPowerCapRangeGet, index_, 0U, &max, &min)) {
      cap.min_uw = min;
      cap.max_uw = max;
    }
    return cap;
  }

  Status set_power_cap(std::uint64_t microwatts) const override {
    return library_->call(&Table::DevPowerCapSet, index_, 0U, microwatts);
  }

  Expected<double> average_power_w() const override {
    std::uint64_t microwatts = 0;
    if (auto s = library_->call(&Table::DevPowerAveGet, index_, 0U, &microwatts); !s) {
      return tl::unexpected(s.error());
    }
    return static_cast<double>(microwatts) / 1e6;
  }

  Expected<EnergyCount> energy() const override {
    EnergyCount energy;
    float resolution = 0;
    if (auto s = library_->call(&Table::DevEnergyCountGet, index_, &energy.count, &resolution,
                                &energy.timestamp_ns);
        !s) {
      return tl::unexpected(s.error());
    }
    energy.resolution_uj = resolution;
    return energy;
  }

  Expected<Activity> activity() const override {
    Activity activity;
    std::uint32_t percent = 0;
    if (auto s = library_->call(&Table::DevBusyPercentGet, index_, &percent); !s) {
      return tl::unexpected(s.error());
    }
    activity.gfx = percent;
    if (library_->call(&Table::DevMemoryBusyPercentGet, index_, &percent)) activity.umc = percent;
    return activity;
  }

  Expected<double> temperature_c(Sensor sensor) const override {
    const std::uint32_t type = sensor == Sensor::Edge      ? kRsmiTempEdge
                               : sensor == Sensor::Hotspot ? kRsmiTempJunction
                                                           : kRsmiTempMemory;
    std::int64_t millidegrees = 0;
    if (auto s =
            library_->call(&Table::DevTempMetricGet, index_, type, kRsmiTempCurrent, &millidegrees);
        !s) {
      return tl::unexpected(s.error());
    }
    return static_cast<double>(millidegrees) / 1000.0;
  }

  Expected<unsigned> max_gfx_clock_mhz() const override {
    rsmi_frequencies_t f{};
    if (auto s = library_->call(&Table::DevGpuClkFreqGet, index_, kRsmiClkSys, &f); !s) {
      return tl::unexpected(s.error());
    }
    std::uint64_t top = 0;
    for (std::uint32_t i = 0; i < f.num_supported && i < 32; ++i)
      top = std::max(top, f.frequency[i]);
    return static_cast<unsigned>(top / 1'000'000);
  }

  Expected<unsigned> gfx_clock_mhz() const override {
    rsmi_frequencies_t f{};
    if (auto s = library_->call(&Table::DevGpuClkFreqGet, index_, kRsmiClkSys, &f); !s) {
      return tl::unexpected(s.error());
    }
    if (f.current >= f.num_supported || f.current >= 32) {
      return tl::unexpected(Failure{kRsmiUnexpectedData, "rsmi_dev_gpu_clk_freq_get"});
    }
    return static_cast<unsigned>(f.frequency[f.current] / 1'000'000);
  }

  Expected<MetricsTable> metrics_table() const override {
    // ROCm SMI 5.2.3 has the table (rsmi_dev_gpu_metrics_info_get) in a layout of its own; the
    // XGMI counters and the independent throttle bits come through AMD SMI only (docs/amd.md).
    return tl::unexpected(Failure{kRsmiNotSupported, "rsmi_dev_gpu_metrics_info_get"});
  }

  Expected<std::vector<ProcessUse>> processes() const override {
    // Every process on the node's GPUs, then which GPUs each uses: those on this one.
    auto all = all_processes();
    if (!all) return tl::unexpected(all.error());
    std::vector<ProcessUse> out;
    for (const rsmi_process_info_t& p : *all) {
      auto devices = devices_of(p.process_id);
      if (!devices) {
        if (devices.error().code == kRsmiNotFound) continue;  // it ended in between
        return tl::unexpected(devices.error());
      }
      if (std::find(devices->begin(), devices->end(), index_) == devices->end()) continue;
      ProcessUse use;
      use.pid = p.process_id;
      // The process's VRAM on all GPUs together: this GPU's only when it uses no other.
      if (devices->size() == 1) use.memory_bytes = p.vram_usage;
      out.push_back(use);
    }
    return out;
  }

  std::string describe(const Failure& failure) const override {
    return library_->describe(failure);
  }

  Which which() const override { return Which::RocmSmi; }

 private:
  // rsmi_compute_process_info_get: the count, then the list; a process that starts in between
  // makes the library answer "insufficient size": asked once more.
  Expected<std::vector<rsmi_process_info_t>> all_processes() const {
    std::uint32_t count = 0;
    if (auto s = library_->call(&Table::ComputeProcessInfoGet, nullptr, &count); !s) {
      return tl::unexpected(s.error());
    }
    std::vector<rsmi_process_info_t> list;
    for (int attempt = 0; attempt < 2; ++attempt) {
      list.assign(count + 4U, rsmi_process_info_t{});
      count = static_cast<std::uint32_t>(list.size());
      auto s = library_->call(&Table::ComputeProcessInfoGet, list.data(), &count);
      if (s) break;
      if (s.error().code != kRsmiInsufficientSize || attempt == 1) {
        return tl::unexpected(s.error());
      }
    }
    list.resize(std::min<std::size_t>(count, list.size()));
    return list;
  }

  // rsmi_compute_process_gpus_get: the devices a process uses.
  Expected<std::vector<std::uint32_t>> devices_of(std::uint32_t pid) const {
    std::uint32_t count = 0;
    if (auto s = library_->call(&Table::ComputeProcessGpusGet, pid, nullptr, &count); !s) {
      return tl::unexpected(s.error());
    }
    std::vector<std::uint32_t> devices(count);
    if (count == 0) return devices;
    if (auto s = library_->call(&Table::ComputeProcessGpusGet, pid, devices.data(), &count); !s) {
      return tl::unexpected(s.error());
    }
    devices.resize(std::min<std::size_t>(count, devices.size()));
    return devices;
  }

  std::shared_ptr<const RocmSmiLibrary> library_;
  std::uint32_t index_;
};

}  // namespace

std::unique_ptr<Device> make_rocm_smi_device(std::shared_ptr<const RocmSmiLibrary> library,
                                             std::uint32_t index) {
  return std::make_unique<RocmSmiDevice>(std::move(library), index);
}

}  // namespace gpuscope::amd
