#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "amd/devices.hpp"

namespace gpuscope::amd {
namespace {

using Table = AmdSmiApi::Table;

class AmdSmiDevice final : public Device {
 public:
  AmdSmiDevice(std::shared_ptr<const AmdSmiLibrary> library, amdsmi_processor_handle handle)
      : library_(std::move(library)), handle_(handle) {}

  Expected<std::string> name() const override {
    amdsmi_asic_info_t info{};
    if (auto s = library_->call(&Table::GetGpuAsicInfo, handle_, &info); !s) {
      return tl::unexpected(s.error());
    }
    info.market_name[sizeof info.market_name - 1] = '\0';
    return std::string(info.market_name);
  }

  Expected<std::string> uuid() const override {
    char text[64] = {};
    unsigned int length = sizeof text;
    if (auto s = library_->call(&Table::GetGpuDeviceUuid, handle_, &length, text); !s) {
      return tl::unexpected(s.error());
    }
    text[sizeof text - 1] = '\0';
    return std::string(text);
  }

  Expected<std::string> pci_bus_id() const override {
    amdsmi_bdf_t bdf{};
    if (auto s = library_->call(&Table::GetGpuDeviceBdf, handle_, &bdf); !s) {
      return tl::unexpected(s.error());
    }
    const std::uint64_t v = bdf.as_uint;
    return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", v >> 16U, (v >> 8U) & 0xFFU, (v >> 3U) & 0x1FU,
                       v & 0x7U);
  }

  Expected<std::uint64_t> memory_total_bytes() const override {
    return library_->read<std::uint64_t>(&Table::GetGpuMemoryTotal, handle_, kAmdMemVram);
  }

  Expected<std::uint64_t> memory_used_bytes() const override {
    return library_->read<std::uint64_t>(&Table::GetGpuMemoryUsage, handle_, kAmdMemVram);
  }

  Expected<PowerCap> power_cap() const override {
    amdsmi_power_cap_info_t info{};
    if (auto s = library_->call(&Table::GetPowerCapInfo, handle_, 0U, &info); !s) {
      return tl::unexpected(s.error());
    }
    return PowerCap{info.power_cap, info.default_power_cap, info.min_power_cap, info.max_power_cap};
  }

  Status set_power_cap(std::uint64_t microwatts) const override {
    return library_->call(&Table::SetPowerCap, handle_, 0U, microwatts);
  }

  Expected<double> average_power_w() const override {
    amdsmi_power_info_t info{};
    if (auto s = library_->call(&Table::GetPowerInfo, handle_, &info); !s) {
      return tl::unexpected(s.error());
    }
    return static_cast<double>(info.average_socket_power);
  }

  Expected<EnergyCount> energy() const override {
    EnergyCount energy;
    float resolution = 0;
    if (auto s = library_->call(&Table::GetEnergyCount, handle_, &energy.count, &resolution,
                                &energy.timestamp_ns);
        !s) {
      return tl::unexpected(s.error());
    }
    energy.resolution_uj = resolution;
    return energy;
  }

  Expected<Activity> activity() const override {
    amdsmi_engine_usage_t usage{};
    if (auto s = library_->call(&Table::GetGpuActivity, handle_, &usage); !s) {
      return tl::unexpected(s.error());
    }
    return Activity{usage.gfx_activity, usage.umc_activity, usage.mm_activity};
  }

  Expected<MetricsTable> metrics_table() const override {
    amdsmi_gpu_metrics_t table{};
    if (auto s = library_->call(&Table::GetGpuMetricsInfo, handle_, &table); !s) {
      return tl::unexpected(s.error());
    }
    return read_metrics_table(table);
  }

  Expected<double> temperature_c(Sensor sensor) const override {
    const amdsmi_temperature_type_t type = sensor == Sensor::Edge      ? kAmdTempEdge
                                           : sensor == Sensor::Hotspot ? kAmdTempHotspot
                                                                       : kAmdTempVram;
    std::int64_t millidegrees = 0;
    if (auto s =
            library_->call(&Table::GetTempMetric, handle_, type, kAmdTempCurrent, &millidegrees);
        !s) {
      return tl::unexpected(s.error());
    }
    return static_cast<double>(millidegrees) / 1000.0;
  }

  Expected<unsigned> max_gfx_clock_mhz() const override {
    amdsmi_clk_info_t info{};
    if (auto s = library_->call(&Table::GetClockInfo, handle_, kAmdClkGfx, &info); !s) {
      return tl::unexpected(s.error());
    }
    return info.max_clk;
  }

  Expected<unsigned> gfx_clock_mhz() const override {
    amdsmi_clk_info_t info{};
    if (auto s = library_->call(&Table::GetClockInfo, handle_, kAmdClkGfx, &info); !s) {
      return tl::unexpected(s.error());
    }
    return info.clk;
  }

  Expected<std::vector<ProcessUse>> processes() const override {
    // Ask for the count, then the list; a process that starts in between makes the library
    // answer "out of resources" with the new count: asked once more.
    std::uint32_t count = 0;
    if (auto s = library_->call(&Table::GetGpuProcessList, handle_, &count, nullptr); !s) {
      return tl::unexpected(s.error());
    }
    std::vector<amdsmi_proc_info_t> list;
    for (int attempt = 0; attempt < 2; ++attempt) {
      list.assign(count + 4U, amdsmi_proc_info_t{});
      count = static_cast<std::uint32_t>(list.size());
      auto s = library_->call(&Table::GetGpuProcessList, handle_, &count, list.data());
      if (s) break;
      if (s.error().code != kAmdOutOfResources || attempt == 1) return tl::unexpected(s.error());
    }
    std::vector<ProcessUse> out;
    for (std::uint32_t i = 0; i < std::min<std::size_t>(count, list.size()); ++i) {
      out.push_back({list[i].pid, list[i].mem, list[i].engine_usage.gfx});
    }
    return out;
  }

  std::string describe(const Failure& failure) const override {
    return library_->describe(failure);
  }

  Which which() const override { return Which::AmdSmi; }

 private:
  std::shared_ptr<const AmdSmiLibrary> library_;
  amdsmi_processor_handle handle_;
};

}  // namespace

MetricsTable read_metrics_table(const amdsmi_gpu_metrics_t& table) {
  constexpr std::uint64_t kAbsent = ~std::uint64_t{0};
  const auto sum = [](const std::uint64_t(&links)[8]) -> std::optional<std::uint64_t> {
    std::optional<std::uint64_t> total;
    for (std::uint64_t kb : links) {
      if (kb != kAbsent) total = total.value_or(0) + kb;
    }
    return total;
  };
  MetricsTable out;
  out.xgmi_read_kb = sum(table.xgmi_read_data_acc);
  out.xgmi_write_kb = sum(table.xgmi_write_data_acc);
  if (table.indep_throttle_status != kAbsent) {
    out.indep_throttle_status = table.indep_throttle_status;
  }
  return out;
}

std::unique_ptr<Device> make_amd_smi_device(std::shared_ptr<const AmdSmiLibrary> library,
                                            amdsmi_processor_handle handle) {
  return std::make_unique<AmdSmiDevice>(std::move(library), handle);
}

}  // namespace gpuscope::amd
