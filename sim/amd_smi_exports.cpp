// The exported C symbols of the simulated AMD SMI (libgpuscope-sim-amdsmi.so), expanded from the
// one AMD SMI entry-point list (amd/entry_points.hpp) over this process's AmdSim.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#include "amd/entry_points.hpp"
#include "sim/amd_sim.hpp"

#define GPUSCOPE_SIM_API __attribute__((visibility("default")))

namespace gpuscope::sim {

AmdSim& process_amd_sim() {
  // Never destroyed: other threads may still call in while the process exits.
  static AmdSim* sim = new AmdSim(system_clock(), /*rocm_smi=*/false);
  return *sim;
}

namespace amdsmi_api {
namespace {

constexpr std::size_t kSlots = 64;
// Handles are addresses of these slots, which hold their own index: stable for the process.
std::array<unsigned, kSlots> g_sockets = [] {
  std::array<unsigned, kSlots> slots{};
  for (unsigned i = 0; i < kSlots; ++i) slots[i] = i;
  return slots;
}();
std::array<unsigned, kSlots> g_processors = g_sockets;

AmdSim& sim() {
  return process_amd_sim();
}

amdsmi_status_t status(AmdResult result) {
  switch (result) {
    case AmdResult::Ok:
      return amd::kAmdSuccess;
    case AmdResult::Invalid:
      return amd::kAmdInval;
    case AmdResult::NotInit:
      return amd::kAmdNotInit;
    case AmdResult::NoPerm:
      return amd::kAmdNoPerm;
    case AmdResult::DriverNotLoaded:
      return amd::kAmdDriverNotLoaded;
    case AmdResult::InitError:
      return amd::kAmdInitError;
    case AmdResult::Load:
      return amd::kAmdFailLoadModule;
    case AmdResult::OutOfBounds:
      return amd::kAmdInputOutOfBounds;
    case AmdResult::NotFound:
      return amd::kAmdNotFound;
    case AmdResult::Unknown:
      return amd::kAmdUnknownError;
  }
  return amd::kAmdUnknownError;
}

// The device index a processor handle names, or kSlots.
unsigned index_of_handle(amdsmi_processor_handle handle) {
  const auto* slot = static_cast<const unsigned*>(handle);
  if (slot < g_processors.data() || slot >= g_processors.data() + kSlots) return kSlots;
  return *slot;
}

// Reads device `handle` names into `reading`; the status to return.
amdsmi_status_t read(amdsmi_processor_handle handle, AmdReading& reading) {
  const unsigned index = index_of_handle(handle);
  if (index >= kSlots) return amd::kAmdInval;
  return status(sim().read(index, reading));
}

template <typename T>
void copy_text(T& destination, const std::string& text) {
  std::snprintf(destination, sizeof destination, "%s", text.c_str());
}

}  // namespace

amdsmi_status_t Init(std::uint64_t /*flags*/) {
  return status(sim().init(options_from_environment()));
}
amdsmi_status_t ShutDown() {
  return status(sim().shutdown());
}

amdsmi_status_t GetSocketHandles(std::uint32_t* count, amdsmi_socket_handle* sockets) {
  if (count == nullptr) return amd::kAmdInval;
  std::uint32_t devices = 0;
  if (auto result = sim().count(devices); result != AmdResult::Ok) return status(result);
  const std::vector<unsigned> cards = sim().cards();
  const auto n = static_cast<std::uint32_t>(cards.empty() ? 0 : cards.back() + 1);
  if (sockets == nullptr) {
    *count = n;
    return amd::kAmdSuccess;
  }
  const std::uint32_t written = std::min(*count, n);
  for (std::uint32_t i = 0; i < written; ++i) sockets[i] = &g_sockets[i];
  *count = written;
  return amd::kAmdSuccess;
}

amdsmi_status_t GetProcessorHandles(amdsmi_socket_handle socket, std::uint32_t* count,
                                    amdsmi_processor_handle* processors) {
  const auto* slot = static_cast<const unsigned*>(socket);
  if (count == nullptr || slot < g_sockets.data() || slot >= g_sockets.data() + kSlots) {
    return amd::kAmdInval;
  }
  std::uint32_t devices = 0;
  if (auto result = sim().count(devices); result != AmdResult::Ok) return status(result);
  const std::vector<unsigned> cards = sim().cards();
  std::vector<unsigned> on_card;
  for (unsigned i = 0; i < cards.size(); ++i) {
    if (cards[i] == *slot) on_card.push_back(i);
  }
  if (processors == nullptr) {
    *count = static_cast<std::uint32_t>(on_card.size());
    return amd::kAmdSuccess;
  }
  const auto written = std::min<std::uint32_t>(*count, static_cast<std::uint32_t>(on_card.size()));
  for (std::uint32_t i = 0; i < written; ++i) processors[i] = &g_processors[on_card[i]];
  *count = written;
  return amd::kAmdSuccess;
}

amdsmi_status_t GetProcessorType(amdsmi_processor_handle processor, processor_type_t* type) {
  if (type == nullptr || index_of_handle(processor) >= kSlots) return amd::kAmdInval;
  *type = amd::kProcessorAmdGpu;
  return amd::kAmdSuccess;
}

amdsmi_status_t StatusCodeToString(amdsmi_status_t code, const char** text) {
  if (text == nullptr) return amd::kAmdInval;
  switch (code) {
    case amd::kAmdSuccess:
      *text = "success";
      break;
    case amd::kAmdInval:
      *text = "invalid parameters";
      break;
    case amd::kAmdNotSupported:
      *text = "not supported";
      break;
    case amd::kAmdFailLoadModule:
      *text = "failed to load a module";
      break;
    case amd::kAmdNoPerm:
      *text = "permission denied";
      break;
    case amd::kAmdInputOutOfBounds:
      *text = "input out of bounds";
      break;
    case amd::kAmdInitError:
      *text = "initialisation error";
      break;
    case amd::kAmdNotInit:
      *text = "not initialised";
      break;
    case amd::kAmdDriverNotLoaded:
      *text = "processor driver not loaded";
      break;
    default:
      *text = "an AMD SMI error (simulated)";
      break;
  }
  return amd::kAmdSuccess;
}

amdsmi_status_t GetLibVersion(amdsmi_version_t* version) {
  if (version == nullptr) return amd::kAmdInval;
  *version = {24, 6, 3, 0, "24.6.3.0 (gpuscope simulation)"};
  return amd::kAmdSuccess;
}

amdsmi_status_t GetGpuAsicInfo(amdsmi_processor_handle processor, amdsmi_asic_info_t* info) {
  const AmdGpuConfig* config = sim().config(index_of_handle(processor));
  if (config == nullptr || info == nullptr) return amd::kAmdInval;
  *info = {};
  copy_text(info->market_name, config->gpu.spec.name);
  copy_text(info->vendor_name, "Advanced Micro Devices Inc. [AMD/ATI]");
  info->vendor_id = 0x1002;
  info->subvendor_id = 0x1002;
  info->device_id = config->amd.device_id;
  info->oam_id = config->card;
  std::snprintf(info->asic_serial, sizeof info->asic_serial, "0x%016llX",
                static_cast<unsigned long long>(config->unique_id));
  return amd::kAmdSuccess;
}

amdsmi_status_t GetGpuDeviceUuid(amdsmi_processor_handle processor, unsigned int* length,
                                 char* uuid) {
  const AmdGpuConfig* config = sim().config(index_of_handle(processor));
  if (config == nullptr || length == nullptr || uuid == nullptr) return amd::kAmdInval;
  if (*length <= config->gpu.uuid.size()) return amd::kAmdInsufficientSize;
  std::snprintf(uuid, *length, "%s", config->gpu.uuid.c_str());
  *length = static_cast<unsigned int>(config->gpu.uuid.size());
  return amd::kAmdSuccess;
}

amdsmi_status_t GetGpuDeviceBdf(amdsmi_processor_handle processor, amdsmi_bdf_t* bdf) {
  const AmdGpuConfig* config = sim().config(index_of_handle(processor));
  if (config == nullptr || bdf == nullptr) return amd::kAmdInval;
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  std::sscanf(config->gpu.pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function);
  bdf->as_uint = (std::uint64_t{domain} << 16U) | (bus << 8U) | (device << 3U) | function;
  return amd::kAmdSuccess;
}

amdsmi_status_t GetGpuActivity(amdsmi_processor_handle processor, amdsmi_engine_usage_t* usage) {
  AmdReading reading;
  if (usage == nullptr) return amd::kAmdInval;
  if (auto rc = read(processor, reading); rc != amd::kAmdSuccess) return rc;
  *usage = {};
  usage->gfx_activity = reading.gfx_activity;
  usage->umc_activity = reading.umc_activity;
  return amd::kAmdSuccess;
}

amdsmi_status_t GetPowerInfo(amdsmi_processor_handle processor, amdsmi_power_info_t* info) {
  AmdReading reading;
  if (info == nullptr) return amd::kAmdInval;
  if (auto rc = read(processor, reading); rc != amd::kAmdSuccess) return rc;
  std::uint64_t cap = 0;
  (void)sim().power_cap_uw(index_of_handle(processor), cap);
  *info = {};
  info->average_socket_power = reading.average_power_w;
  info->current_socket_power = reading.average_power_w;
  info->power_limit = static_cast<std::uint32_t>(cap / 1'000'000U);
  return amd::kAmdSuccess;
}

amdsmi_status_t GetEnergyCount(amdsmi_processor_handle processor, std::uint64_t* energy,
                               float* resolution_uj, std::uint64_t* timestamp_ns) {
  AmdReading reading;
  if (energy == nullptr || timestamp_ns == nullptr) return amd::kAmdInval;
  if (auto rc = read(processor, reading); rc != amd::kAmdSuccess) return rc;
  *energy = reading.energy_count;
  *timestamp_ns = reading.timestamp_ns;
  if (resolution_uj != nullptr) *resolution_uj = static_cast<float>(amd::kEnergyResolutionUj);
  return amd::kAmdSuccess;
}

amdsmi_status_t GetGpuVramUsage(amdsmi_processor_handle processor, amdsmi_vram_usage_t* usage) {
  AmdReading reading;
  const AmdGpuConfig* config = sim().config(index_of_handle(processor));
  if (usage == nullptr || config == nullptr) return amd::kAmdInval;
  if (auto rc = read(processor, reading); rc != amd::kAmdSuccess) return rc;
  *usage = {};
  usage->vram_total = config->gpu.spec.memory_mib;  // MB, as AMD SMI reports it
  usage->vram_used = static_cast<std::uint32_t>(reading.memory_used_bytes >> 20U);
  return amd::kAmdSuccess;
}

amdsmi_status_t GetGpuMemoryTotal(amdsmi_processor_handle processor, amdsmi_memory_type_t type,
                                  std::uint64_t* bytes) {
  const AmdGpuConfig* config = sim().config(index_of_handle(processor));
  if (config == nullptr || bytes == nullptr) return amd::kAmdInval;
  if (type != amd::kAmdMemVram) return amd::kAmdNotSupported;
  *bytes = std::uint64_t{config->gpu.spec.memory_mib} << 20U;
  return amd::kAmdSuccess;
}

amdsmi_status_t GetGpuMemoryUsage(amdsmi_processor_handle processor, amdsmi_memory_type_t type,
                                  std::uint64_t* bytes) {
  AmdReading reading;
  if (bytes == nullptr) return amd::kAmdInval;
  if (type != amd::kAmdMemVram) return amd::kAmdNotSupported;
  if (auto rc = read(processor, reading); rc != amd::kAmdSuccess) return rc;
  *bytes = reading.memory_used_bytes;
  return amd::kAmdSuccess;
}

amdsmi_status_t GetTempMetric(amdsmi_processor_handle processor, amdsmi_temperature_type_t sensor,
                              amdsmi_temperature_metric_t metric, std::int64_t* millidegrees) {
  AmdReading reading;
  if (millidegrees == nullptr) return amd::kAmdInval;
  if (metric != amd::kAmdTempCurrent || sensor > amd::kAmdTempVram) return amd::kAmdNotSupported;
  if (auto rc = read(processor, reading); rc != amd::kAmdSuccess) return rc;
  const double c = sensor == amd::kAmdTempEdge      ? reading.edge_c
                   : sensor == amd::kAmdTempHotspot ? reading.temperature_c
                                                    : reading.memory_c;
  *millidegrees = static_cast<std::int64_t>(c * 1000.0);
  return amd::kAmdSuccess;
}

amdsmi_status_t GetClockInfo(amdsmi_processor_handle processor, amdsmi_clk_type_t type,
                             amdsmi_clk_info_t* info) {
  AmdReading reading;
  const AmdGpuConfig* config = sim().config(index_of_handle(processor));
  if (info == nullptr || config == nullptr) return amd::kAmdInval;
  if (type != amd::kAmdClkGfx && type != amd::kAmdClkMem) return amd::kAmdNotSupported;
  if (auto rc = read(processor, reading); rc != amd::kAmdSuccess) return rc;
  const ClockSpec& clocks = config->gpu.spec.clocks;
  *info = {};
  info->clk = type == amd::kAmdClkGfx ? reading.gfx_clock_mhz : clocks.mem_mhz;
  info->min_clk = type == amd::kAmdClkGfx ? clocks.idle_sm_mhz : clocks.mem_mhz;
  info->max_clk = type == amd::kAmdClkGfx ? clocks.max_sm_mhz : clocks.mem_mhz;
  return amd::kAmdSuccess;
}

// The metrics table: the members of the model's format version filled, the others all ones (as
// AMD SMI leaves a member the GPU's table lacks).
amdsmi_status_t GetGpuMetricsInfo(amdsmi_processor_handle processor,
                                  amdsmi_gpu_metrics_t* metrics) {
  AmdReading reading;
  const AmdGpuConfig* config = sim().config(index_of_handle(processor));
  if (metrics == nullptr || config == nullptr) return amd::kAmdInval;
  if (auto rc = read(processor, reading); rc != amd::kAmdSuccess) return rc;
  std::memset(metrics, 0xFF, sizeof *metrics);
  metrics->common_header = {sizeof *metrics, 1,
                            static_cast<std::uint8_t>(config->amd.metrics_content_revision)};
  const auto u16 = [](double value) { return static_cast<std::uint16_t>(std::max(0.0, value)); };
  metrics->temperature_edge = u16(reading.edge_c);
  metrics->temperature_hotspot = u16(reading.temperature_c);
  metrics->temperature_mem = u16(reading.memory_c);
  metrics->average_gfx_activity = u16(reading.gfx_activity);
  metrics->average_umc_activity = u16(reading.umc_activity);
  metrics->average_mm_activity = 0;
  metrics->average_socket_power = u16(reading.average_power_w);
  metrics->energy_accumulator = reading.energy_count;
  metrics->system_clock_counter = reading.timestamp_ns;
  metrics->average_gfxclk_frequency = u16(reading.gfx_clock_mhz);
  metrics->current_gfxclk = u16(reading.gfx_clock_mhz);
  metrics->current_uclk = u16(config->gpu.spec.clocks.mem_mhz);
  // Throttle status: bit 0 stands for the power cap here (the bits are ASIC-specific).
  metrics->throttle_status = reading.power_capped ? 1U : 0U;
  metrics->indep_throttle_status = reading.power_capped ? 1U : 0U;
  if (config->amd.metrics_content_revision >= 4) {
    metrics->current_socket_power = u16(reading.average_power_w);
    for (unsigned link = 0; link < 8; ++link) {
      const bool used = link < config->amd.xgmi_links;
      metrics->xgmi_read_data_acc[link] = used ? reading.xgmi_read_kb : 0;
      metrics->xgmi_write_data_acc[link] = used ? reading.xgmi_write_kb : 0;
    }
  }
  return amd::kAmdSuccess;
}

amdsmi_status_t GetGpuProcessList(amdsmi_processor_handle processor, std::uint32_t* count,
                                  amdsmi_proc_info_t* list) {
  const AmdGpuConfig* config = sim().config(index_of_handle(processor));
  if (config == nullptr || count == nullptr) return amd::kAmdInval;
  const auto& processes = config->gpu.processes;
  const auto running = static_cast<std::uint32_t>(processes.size());
  if (*count == 0 || list == nullptr) {
    *count = running;
    return amd::kAmdSuccess;
  }
  const std::uint32_t written = std::min(*count, running);
  // The graphics engine's time shared evenly by the processes on it, as the simulated NVML's
  // process utilisation: the simulated GPU does not know which of them did the work.
  AmdReading reading;
  if (auto rc = read(processor, reading); rc != amd::kAmdSuccess) return rc;
  for (std::uint32_t i = 0; i < written; ++i) {
    list[i] = {};
    list[i].pid = processes[i].pid;
    list[i].engine_usage.gfx = reading.gfx_busy_ns / running;
    list[i].mem = std::uint64_t{processes[i].used_memory_mib} << 20U;
    list[i].memory_usage.vram_mem = list[i].mem;
    copy_text(list[i].name, "simulated");
  }
  *count = running;
  return written < running ? amd::kAmdOutOfResources : amd::kAmdSuccess;
}

amdsmi_status_t GetPowerCapInfo(amdsmi_processor_handle processor, std::uint32_t sensor,
                                amdsmi_power_cap_info_t* info) {
  const unsigned index = index_of_handle(processor);
  const AmdGpuConfig* config = sim().config(index);
  if (config == nullptr || info == nullptr) return amd::kAmdInval;
  if (sensor != 0) return amd::kAmdInval;
  std::uint64_t cap = 0;
  if (auto result = sim().power_cap_uw(index, cap); result != AmdResult::Ok) return status(result);
  const PowerSpec& power = config->gpu.spec.power;
  *info = {};
  info->power_cap = cap;
  info->default_power_cap = static_cast<std::uint64_t>(power.default_w * 1e6);
  info->min_power_cap = static_cast<std::uint64_t>(power.min_w * 1e6);
  info->max_power_cap = static_cast<std::uint64_t>(power.max_w * 1e6);
  info->dpm_cap = config->gpu.spec.clocks.max_sm_mhz;
  return amd::kAmdSuccess;
}

amdsmi_status_t SetPowerCap(amdsmi_processor_handle processor, std::uint32_t sensor,
                            std::uint64_t microwatts) {
  const unsigned index = index_of_handle(processor);
  if (index >= kSlots || sensor != 0) return amd::kAmdInval;
  return status(sim().set_power_cap_uw(index, microwatts));
}

}  // namespace amdsmi_api
}  // namespace gpuscope::sim

// Each call then spends what the scenario's driver_costs says it costs (sim/costs.hpp).
#define GPUSCOPE_SIM_AMD_EXPORT(id, req, params, args, symbol)                \
  extern "C" GPUSCOPE_SIM_API amdsmi_status_t symbol params {                 \
    const amdsmi_status_t result = gpuscope::sim::amdsmi_api::id args;        \
    const auto cost = gpuscope::sim::process_amd_sim().call_cost_of(#symbol); \
    gpuscope::sim::spend_call_cost(cost.waits, cost.ns, std::nullopt);        \
    return result;                                                            \
  }
GPUSCOPE_AMDSMI_ENTRY_POINTS(GPUSCOPE_SIM_AMD_EXPORT)

// Not AMD SMI: why the last call failed, for the loader's messages.
extern "C" GPUSCOPE_SIM_API const char* gpuscopeSimAmdSmiLastError(void) {
  return gpuscope::sim::process_amd_sim().last_error();
}
