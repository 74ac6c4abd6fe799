// The exported C symbols of the simulated ROCm SMI (libgpuscope-sim-rocmsmi.so), expanded from
// the one ROCm SMI entry-point list (amd/entry_points.hpp) over this process's AmdSim. Devices
// are indices, as in ROCm SMI; units are microwatts, bytes, millidegrees and Hz.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "amd/entry_points.hpp"
#include "sim/amd_sim.hpp"

#define GPUSCOPE_SIM_API __attribute__((visibility("default")))

namespace gpuscope::sim {

AmdSim& process_amd_sim() {
  static AmdSim* sim = new AmdSim(system_clock(), /*rocm_smi=*/true);
  return *sim;
}

namespace rsmi_api {
namespace {

AmdSim& sim() {
  return process_amd_sim();
}

rsmi_status_t status(AmdResult result) {
  switch (result) {
    case AmdResult::Ok:
      return amd::kRsmiSuccess;
    case AmdResult::Invalid:
      return amd::kRsmiInvalidArgs;
    case AmdResult::NotInit:
      return amd::kRsmiInitError;
    case AmdResult::NoPerm:
      return amd::kRsmiPermission;
    // ROCm SMI has no "driver not loaded": it fails its init, as Debian's does without amdgpu.
    case AmdResult::DriverNotLoaded:
      return amd::kRsmiInitError;
    case AmdResult::InitError:
      return amd::kRsmiInitError;
    case AmdResult::Load:
      return amd::kRsmiInitError;
    case AmdResult::OutOfBounds:
      return amd::kRsmiInputOutOfBounds;
    case AmdResult::NotFound:
      return amd::kRsmiNotFound;
    case AmdResult::Unknown:
      return amd::kRsmiUnknownError;
  }
  return amd::kRsmiUnknownError;
}

rsmi_status_t read(std::uint32_t device, AmdReading& reading) {
  return status(sim().read(device, reading));
}

}  // namespace

rsmi_status_t Init(std::uint64_t /*flags*/) {
  return status(sim().init(options_from_environment()));
}
rsmi_status_t ShutDown() {
  return status(sim().shutdown());
}
rsmi_status_t NumMonitorDevices(std::uint32_t* count) {
  if (count == nullptr) return amd::kRsmiInvalidArgs;
  *count = 0;
  return status(sim().count(*count));
}

rsmi_status_t StatusString(rsmi_status_t code, const char** text) {
  if (text == nullptr) return amd::kRsmiInvalidArgs;
  switch (code) {
    case amd::kRsmiSuccess:
      *text = "success";
      break;
    case amd::kRsmiInvalidArgs:
      *text = "invalid arguments";
      break;
    case amd::kRsmiNotSupported:
      *text = "not supported";
      break;
    case amd::kRsmiPermission:
      *text = "permission denied";
      break;
    case amd::kRsmiInputOutOfBounds:
      *text = "input out of bounds";
      break;
    case amd::kRsmiInitError:
      *text = "initialisation error";
      break;
    default:
      *text = "a ROCm SMI error (simulated)";
      break;
  }
  return amd::kRsmiSuccess;
}

rsmi_status_t VersionGet(rsmi_version_t* version) {
  if (version == nullptr) return amd::kRsmiInvalidArgs;
  *version = {5, 2, 3, "5.2.3 (gpuscope simulation)"};
  return amd::kRsmiSuccess;
}

rsmi_status_t DevNameGet(std::uint32_t device, char* name, std::size_t length) {
  const AmdGpuConfig* config = sim().config(device);
  if (config == nullptr || name == nullptr || length == 0) return amd::kRsmiInvalidArgs;
  std::snprintf(name, length, "%s", config->gpu.spec.name.c_str());
  return length <= config->gpu.spec.name.size() ? amd::kRsmiInsufficientSize : amd::kRsmiSuccess;
}

rsmi_status_t DevUniqueIdGet(std::uint32_t device, std::uint64_t* id) {
  const AmdGpuConfig* config = sim().config(device);
  if (config == nullptr || id == nullptr) return amd::kRsmiInvalidArgs;
  *id = config->unique_id;
  return amd::kRsmiSuccess;
}

rsmi_status_t DevPciIdGet(std::uint32_t device, std::uint64_t* bdfid) {
  const AmdGpuConfig* config = sim().config(device);
  if (config == nullptr || bdfid == nullptr) return amd::kRsmiInvalidArgs;
  unsigned domain = 0, bus = 0, dev = 0, function = 0;
  std::sscanf(config->gpu.pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &function);
  *bdfid = (std::uint64_t{domain} << 32U) | (bus << 8U) | (dev << 3U) | function;
  return amd::kRsmiSuccess;
}

rsmi_status_t DevBusyPercentGet(std::uint32_t device, std::uint32_t* percent) {
  AmdReading reading;
  if (percent == nullptr) return amd::kRsmiInvalidArgs;
  if (auto rc = read(device, reading); rc != amd::kRsmiSuccess) return rc;
  *percent = reading.gfx_activity;
  return amd::kRsmiSuccess;
}

rsmi_status_t DevMemoryBusyPercentGet(std::uint32_t device, std::uint32_t* percent) {
  AmdReading reading;
  if (percent == nullptr) return amd::kRsmiInvalidArgs;
  if (auto rc = read(device, reading); rc != amd::kRsmiSuccess) return rc;
  *percent = reading.umc_activity;
  return amd::kRsmiSuccess;
}

rsmi_status_t DevPowerAveGet(std::uint32_t device, std::uint32_t sensor,
                             std::uint64_t* microwatts) {
  AmdReading reading;
  if (microwatts == nullptr || sensor != 0) return amd::kRsmiInvalidArgs;
  if (auto rc = read(device, reading); rc != amd::kRsmiSuccess) return rc;
  *microwatts = reading.average_power_uw;
  return amd::kRsmiSuccess;
}

rsmi_status_t DevEnergyCountGet(std::uint32_t device, std::uint64_t* energy, float* resolution_uj,
                                std::uint64_t* timestamp_ns) {
  AmdReading reading;
  if (energy == nullptr || timestamp_ns == nullptr) return amd::kRsmiInvalidArgs;
  if (auto rc = read(device, reading); rc != amd::kRsmiSuccess) return rc;
  *energy = reading.energy_count;
  *timestamp_ns = reading.timestamp_ns;
  if (resolution_uj != nullptr) *resolution_uj = static_cast<float>(amd::kEnergyResolutionUj);
  return amd::kRsmiSuccess;
}

rsmi_status_t DevMemoryTotalGet(std::uint32_t device, rsmi_memory_type_t type,
                                std::uint64_t* bytes) {
  const AmdGpuConfig* config = sim().config(device);
  if (config == nullptr || bytes == nullptr) return amd::kRsmiInvalidArgs;
  if (type != amd::kRsmiMemVram) return amd::kRsmiNotSupported;
  *bytes = std::uint64_t{config->gpu.spec.memory_mib} << 20U;
  return amd::kRsmiSuccess;
}

rsmi_status_t DevMemoryUsageGet(std::uint32_t device, rsmi_memory_type_t type,
                                std::uint64_t* bytes) {
  AmdReading reading;
  if (bytes == nullptr) return amd::kRsmiInvalidArgs;
  if (type != amd::kRsmiMemVram) return amd::kRsmiNotSupported;
  if (auto rc = read(device, reading); rc != amd::kRsmiSuccess) return rc;
  *bytes = reading.memory_used_bytes;
  return amd::kRsmiSuccess;
}

rsmi_status_t DevTempMetricGet(std::uint32_t device, std::uint32_t sensor,
                               rsmi_temperature_metric_t metric, std::int64_t* millidegrees) {
  AmdReading reading;
  if (millidegrees == nullptr) return amd::kRsmiInvalidArgs;
  if (metric != amd::kRsmiTempCurrent || sensor > amd::kRsmiTempMemory) {
    return amd::kRsmiNotSupported;
  }
  if (auto rc = read(device, reading); rc != amd::kRsmiSuccess) return rc;
  const double c = sensor == amd::kRsmiTempEdge       ? reading.edge_c
                   : sensor == amd::kRsmiTempJunction ? reading.temperature_c
                                                      : reading.memory_c;
  *millidegrees = static_cast<std::int64_t>(c * 1000.0);
  return amd::kRsmiSuccess;
}

// The graphics clock's levels: the idle and the peak clock, the current one last when between.
rsmi_status_t DevGpuClkFreqGet(std::uint32_t device, rsmi_clk_type_t type,
                               rsmi_frequencies_t* frequencies) {
  AmdReading reading;
  const AmdGpuConfig* config = sim().config(device);
  if (config == nullptr || frequencies == nullptr) return amd::kRsmiInvalidArgs;
  if (type != amd::kRsmiClkSys && type != amd::kRsmiClkMem) return amd::kRsmiNotSupported;
  if (auto rc = read(device, reading); rc != amd::kRsmiSuccess) return rc;
  const ClockSpec& clocks = config->gpu.spec.clocks;
  *frequencies = {};
  if (type == amd::kRsmiClkMem) {
    frequencies->num_supported = 1;
    frequencies->frequency[0] = std::uint64_t{clocks.mem_mhz} * 1'000'000U;
    return amd::kRsmiSuccess;
  }
  frequencies->num_supported = 3;
  frequencies->frequency[0] = std::uint64_t{clocks.idle_sm_mhz} * 1'000'000U;
  frequencies->frequency[1] = std::uint64_t{reading.gfx_clock_mhz} * 1'000'000U;
  frequencies->frequency[2] = std::uint64_t{clocks.max_sm_mhz} * 1'000'000U;
  frequencies->current = 1;
  return amd::kRsmiSuccess;
}

rsmi_status_t DevPowerCapGet(std::uint32_t device, std::uint32_t sensor,
                             std::uint64_t* microwatts) {
  if (microwatts == nullptr || sensor != 0) return amd::kRsmiInvalidArgs;
  return status(sim().power_cap_uw(device, *microwatts));
}

rsmi_status_t DevPowerCapDefaultGet(std::uint32_t device, std::uint64_t* microwatts) {
  const AmdGpuConfig* config = sim().config(device);
  if (config == nullptr || microwatts == nullptr) return amd::kRsmiInvalidArgs;
  *microwatts = static_cast<std::uint64_t>(config->gpu.spec.power.default_w * 1e6);
  return amd::kRsmiSuccess;
}

rsmi_status_t DevPowerCapRangeGet(std::uint32_t device, std::uint32_t sensor,
                                  std::uint64_t* max_microwatts, std::uint64_t* min_microwatts) {
  const AmdGpuConfig* config = sim().config(device);
  if (config == nullptr || max_microwatts == nullptr || min_microwatts == nullptr || sensor != 0) {
    return amd::kRsmiInvalidArgs;
  }
  *max_microwatts = static_cast<std::uint64_t>(config->gpu.spec.power.max_w * 1e6);
  *min_microwatts = static_cast<std::uint64_t>(config->gpu.spec.power.min_w * 1e6);
  return amd::kRsmiSuccess;
}

rsmi_status_t DevPowerCapSet(std::uint32_t device, std::uint32_t sensor, std::uint64_t microwatts) {
  if (sensor != 0) return amd::kRsmiInvalidArgs;
  return status(sim().set_power_cap_uw(device, microwatts));
}

// Every process of the scenario's AMD GPUs once, its VRAM summed over the GPUs it uses, as the
// library counts it.
rsmi_status_t ComputeProcessInfoGet(rsmi_process_info_t* processes, std::uint32_t* count) {
  if (count == nullptr) return amd::kRsmiInvalidArgs;
  std::uint32_t devices = 0;
  if (auto rc = status(sim().count(devices)); rc != amd::kRsmiSuccess) return rc;
  std::vector<rsmi_process_info_t> all;
  for (std::uint32_t d = 0; d < devices; ++d) {
    for (const ProcessSpec& p : sim().config(d)->gpu.processes) {
      auto it = std::find_if(all.begin(), all.end(),
                             [&p](const auto& seen) { return seen.process_id == p.pid; });
      if (it == all.end()) it = all.insert(all.end(), {p.pid, p.pid + 0x8000U, 0, 0, 0xFFFFFFFFU});
      it->vram_usage += std::uint64_t{p.used_memory_mib} << 20U;
    }
  }
  const auto found = static_cast<std::uint32_t>(all.size());
  if (processes == nullptr) {
    *count = found;
    return amd::kRsmiSuccess;
  }
  std::copy_n(all.begin(), std::min(*count, found), processes);
  const bool fits = *count >= found;
  *count = std::min(*count, found);
  return fits ? amd::kRsmiSuccess : amd::kRsmiInsufficientSize;
}

rsmi_status_t ComputeProcessGpusGet(std::uint32_t pid, std::uint32_t* indices,
                                    std::uint32_t* count) {
  if (count == nullptr) return amd::kRsmiInvalidArgs;
  std::uint32_t devices = 0;
  if (auto rc = status(sim().count(devices)); rc != amd::kRsmiSuccess) return rc;
  std::vector<std::uint32_t> used;
  for (std::uint32_t d = 0; d < devices; ++d) {
    const auto& list = sim().config(d)->gpu.processes;
    if (std::any_of(list.begin(), list.end(), [pid](const auto& p) { return p.pid == pid; })) {
      used.push_back(d);
    }
  }
  if (used.empty()) return amd::kRsmiNotFound;
  const auto n = static_cast<std::uint32_t>(used.size());
  if (indices != nullptr) std::copy_n(used.begin(), std::min(*count, n), indices);
  const bool fits = indices == nullptr || *count >= n;
  *count = indices == nullptr ? n : std::min(*count, n);
  return fits ? amd::kRsmiSuccess : amd::kRsmiInsufficientSize;
}

}  // namespace rsmi_api
}  // namespace gpuscope::sim

// Each call then spends what the scenario's driver_costs says it costs (sim/costs.hpp).
#define GPUSCOPE_SIM_RSMI_EXPORT(id, req, params, args, symbol)               \
  extern "C" GPUSCOPE_SIM_API rsmi_status_t symbol params {                   \
    const rsmi_status_t result = gpuscope::sim::rsmi_api::id args;            \
    const auto cost = gpuscope::sim::process_amd_sim().call_cost_of(#symbol); \
    gpuscope::sim::spend_call_cost(cost.waits, cost.ns, std::nullopt);        \
    return result;                                                            \
  }
GPUSCOPE_RSMI_ENTRY_POINTS(GPUSCOPE_SIM_RSMI_EXPORT)

// Not ROCm SMI: why the last call failed, for the loader's messages.
extern "C" GPUSCOPE_SIM_API const char* gpuscopeSimRocmSmiLastError(void) {
  return gpuscope::sim::process_amd_sim().last_error();
}
