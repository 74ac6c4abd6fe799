#include "collect/amd_describe.hpp"

#include <fmt/format.h>

#include "amd/sysfs_probe.hpp"
#include "util/environment.hpp"

namespace gpuscope::collect {
namespace {

template <typename T>
Capability capability(const amd::Device& device, const char* key, const char* label,
                      const amd::Expected<T>& result) {
  return {key, label, result.has_value(), result ? "" : device.describe(result.error())};
}

// What a device offers, probed once: one capability per reading gpuscope will sample.
void probe(const amd::Device& device, DeviceDescription& d) {
  d.capabilities.push_back(capability(device, "power", "average power", device.average_power_w()));
  d.capabilities.push_back(
      capability(device, "energy_counter", "energy accumulator", device.energy()));
  const auto activity = device.activity();
  d.capabilities.push_back(capability(device, "gfx_activity", "graphics activity", activity));
  Capability umc{"umc_activity", "memory controller activity", activity && activity->umc, ""};
  if (!umc.supported) {
    umc.detail = activity ? "the library does not report it" : device.describe(activity.error());
  }
  d.capabilities.push_back(std::move(umc));
  d.capabilities.push_back(
      capability(device, "memory_used", "memory used", device.memory_used_bytes()));
  d.capabilities.push_back(capability(device, "temperature", "hotspot temperature",
                                      device.temperature_c(amd::Sensor::Hotspot)));
  d.capabilities.push_back(
      capability(device, "graphics_clock", "graphics clock", device.gfx_clock_mhz()));
  d.saturation_detail =
      "AMD SMI and ROCm SMI have no SM, tensor or DRAM saturation counters (no GPM equivalent)";
}

DeviceDescription describe_device(const amd::Device& device, unsigned index, unsigned order) {
  DeviceDescription d;
  d.index = index;
  d.vendor = Vendor::Amd;
  d.vendor_index = order;
  if (auto name = device.name()) d.name = *name;
  if (auto uuid = device.uuid()) d.uuid = *uuid;
  if (auto pci = device.pci_bus_id()) d.pci_bus_id = *pci;
  if (auto bytes = device.memory_total_bytes()) d.memory_total_bytes = *bytes;
  if (auto cap = device.power_cap()) {
    d.power_limit_w = static_cast<double>(cap->current_uw) / 1e6;
    if (cap->default_uw) d.default_power_limit_w = static_cast<double>(*cap->default_uw) / 1e6;
    if (cap->min_uw) d.min_power_limit_w = static_cast<double>(*cap->min_uw) / 1e6;
    if (cap->max_uw) d.max_power_limit_w = static_cast<double>(*cap->max_uw) / 1e6;
  }
  if (auto mhz = device.max_gfx_clock_mhz()) d.max_graphics_clock_mhz = *mhz;
  probe(device, d);
  return d;
}

}  // namespace

std::unique_ptr<amd::Session> open_amd(const BackendOptions& options) {
  amd::OpenOptions open;
  if (!options.simulate.empty()) {
    use_simulated_scenario(options.simulate);  // read by the simulated libraries when opened
    open.amd_smi_path =
        simulated_library("GPUSCOPE_SIM_AMD_SMI_LIBRARY", "libgpuscope-sim-amdsmi.so");
    open.rocm_smi_path =
        simulated_library("GPUSCOPE_SIM_ROCM_SMI_LIBRARY", "libgpuscope-sim-rocmsmi.so");
    open.simulated = true;
  } else {
    open.amd_smi_path = util::environment_or_empty("GPUSCOPE_AMD_SMI_LIBRARY");
    open.rocm_smi_path = util::environment_or_empty("GPUSCOPE_ROCM_SMI_LIBRARY");
  }
  return amd::Session::open(open);
}

bool amd_absent(const Error& error) {
  return amd::is_no_amd_gpu(error) || amd::is_no_amd_library(error);
}

AmdSystemDescription describe_amd(const amd::Session& session, unsigned first_index) {
  AmdSystemDescription system;
  system.library = session.library_name();
  system.library_path = session.library_path();
  system.library_version = session.library_version();
  if (!session.fallback_reason().empty()) system.fallback_reason = session.fallback_reason();
  for (std::size_t i = 0; i < session.devices().size(); ++i) {
    const auto order = static_cast<unsigned>(i);
    system.devices.push_back(describe_device(*session.devices()[i], first_index + order, order));
  }
  return system;
}

}  // namespace gpuscope::collect
