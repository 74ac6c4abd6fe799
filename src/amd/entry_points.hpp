// The one list of AMD SMI entry points and the one list of ROCm SMI entry points gpuscope uses.
//
// Each entry names a function (the id), whether gpuscope can run without it, its parameter list,
// its argument list and the exported symbol. The loader's function tables (library.hpp) and the
// simulated libraries' exports (sim/amd_exports.cpp, sim/rsmi_exports.cpp) are both expanded from
// these lists, so they cannot disagree. Every function returns its library's status type.
//
//   GPUSCOPE_AMDSMI_ENTRY_POINTS(X)  X(id, requirement, params, args, symbol)
//   GPUSCOPE_RSMI_ENTRY_POINTS(X)    X(id, requirement, params, args, symbol)
//
// requirement is Required (the library is refused without it) or Optional (what it serves is
// reported as unsupported). The units are those of docs/amd.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "amd/abi.hpp"

// clang-format off
#define GPUSCOPE_AMDSMI_ENTRY_POINTS(X)  \
  X(Init, Required, (std::uint64_t flags), \
    (flags), amdsmi_init) \
  X(ShutDown, Required, (), \
    (), amdsmi_shut_down) \
  X(GetSocketHandles, Required, (std::uint32_t* count, amdsmi_socket_handle* sockets), \
    (count, sockets), amdsmi_get_socket_handles) \
  X(GetProcessorHandles, Required, (amdsmi_socket_handle socket, std::uint32_t* count, amdsmi_processor_handle* processors), \
    (socket, count, processors), amdsmi_get_processor_handles) \
  X(GetProcessorType, Optional, (amdsmi_processor_handle processor, processor_type_t* type), \
    (processor, type), amdsmi_get_processor_type) \
  X(StatusCodeToString, Optional, (amdsmi_status_t status, const char** text), \
    (status, text), amdsmi_status_code_to_string) \
  X(GetLibVersion, Optional, (amdsmi_version_t* version), \
    (version), amdsmi_get_lib_version) \
  X(GetGpuAsicInfo, Optional, (amdsmi_processor_handle processor, amdsmi_asic_info_t* info), \
    (processor, info), amdsmi_get_gpu_asic_info) \
  X(GetGpuDeviceUuid, Optional, (amdsmi_processor_handle processor, unsigned int* length, char* uuid), \
    (processor, length, uuid), amdsmi_get_gpu_device_uuid) \
  X(GetGpuDeviceBdf, Optional, (amdsmi_processor_handle processor, amdsmi_bdf_t* bdf), \
    (processor, bdf), amdsmi_get_gpu_device_bdf) \
  X(GetGpuActivity, Optional, (amdsmi_processor_handle processor, amdsmi_engine_usage_t* usage), \
    (processor, usage), amdsmi_get_gpu_activity) \
  X(GetPowerInfo, Optional, (amdsmi_processor_handle processor, amdsmi_power_info_t* info), \
    (processor, info), amdsmi_get_power_info) \
  X(GetEnergyCount, Optional, (amdsmi_processor_handle processor, std::uint64_t* energy, float* resolution_uj, std::uint64_t* timestamp_ns), \
    (processor, energy, resolution_uj, timestamp_ns), amdsmi_get_energy_count) \
  X(GetGpuVramUsage, Optional, (amdsmi_processor_handle processor, amdsmi_vram_usage_t* usage), \
    (processor, usage), amdsmi_get_gpu_vram_usage) \
  X(GetGpuMemoryTotal, Optional, (amdsmi_processor_handle processor, amdsmi_memory_type_t type, std::uint64_t* bytes), \
    (processor, type, bytes), amdsmi_get_gpu_memory_total) \
  X(GetGpuMemoryUsage, Optional, (amdsmi_processor_handle processor, amdsmi_memory_type_t type, std::uint64_t* bytes), \
    (processor, type, bytes), amdsmi_get_gpu_memory_usage) \
  X(GetTempMetric, Optional, (amdsmi_processor_handle processor, amdsmi_temperature_type_t sensor, amdsmi_temperature_metric_t metric, std::int64_t* millidegrees), \
    (processor, sensor, metric, millidegrees), amdsmi_get_temp_metric) \
  X(GetClockInfo, Optional, (amdsmi_processor_handle processor, amdsmi_clk_type_t type, amdsmi_clk_info_t* info), \
    (processor, type, info), amdsmi_get_clock_info) \
  X(GetGpuMetricsInfo, Optional, (amdsmi_processor_handle processor, amdsmi_gpu_metrics_t* metrics), \
    (processor, metrics), amdsmi_get_gpu_metrics_info) \
  X(GetGpuProcessList, Optional, (amdsmi_processor_handle processor, std::uint32_t* count, amdsmi_proc_info_t* list), \
    (processor, count, list), amdsmi_get_gpu_process_list) \
  X(GetPowerCapInfo, Optional, (amdsmi_processor_handle processor, std::uint32_t sensor, amdsmi_power_cap_info_t* info), \
    (processor, sensor, info), amdsmi_get_power_cap_info) \
  X(SetPowerCap, Optional, (amdsmi_processor_handle processor, std::uint32_t sensor, std::uint64_t microwatts), \
    (processor, sensor, microwatts), amdsmi_set_power_cap)

#define GPUSCOPE_RSMI_ENTRY_POINTS(X)  \
  X(Init, Required, (std::uint64_t flags), \
    (flags), rsmi_init) \
  X(ShutDown, Required, (), \
    (), rsmi_shut_down) \
  X(NumMonitorDevices, Required, (std::uint32_t* count), \
    (count), rsmi_num_monitor_devices) \
  X(StatusString, Optional, (rsmi_status_t status, const char** text), \
    (status, text), rsmi_status_string) \
  X(VersionGet, Optional, (rsmi_version_t* version), \
    (version), rsmi_version_get) \
  X(DevNameGet, Optional, (std::uint32_t device, char* name, std::size_t length), \
    (device, name, length), rsmi_dev_name_get) \
  X(DevUniqueIdGet, Optional, (std::uint32_t device, std::uint64_t* id), \
    (device, id), rsmi_dev_unique_id_get) \
  X(DevPciIdGet, Optional, (std::uint32_t device, std::uint64_t* bdfid), \
    (device, bdfid), rsmi_dev_pci_id_get) \
  X(DevBusyPercentGet, Optional, (std::uint32_t device, std::uint32_t* percent), \
    (device, percent), rsmi_dev_busy_percent_get) \
  X(DevMemoryBusyPercentGet, Optional, (std::uint32_t device, std::uint32_t* percent), \
    (device, percent), rsmi_dev_memory_busy_percent_get) \
  X(DevPowerAveGet, Optional, (std::uint32_t device, std::uint32_t sensor, std::uint64_t* microwatts), \
    (device, sensor, microwatts), rsmi_dev_power_ave_get) \
  X(DevEnergyCountGet, Optional, (std::uint32_t device, std::uint64_t* energy, float* resolution_uj, std::uint64_t* timestamp_ns), \
    (device, energy, resolution_uj, timestamp_ns), rsmi_dev_energy_count_get) \
  X(DevMemoryTotalGet, Optional, (std::uint32_t device, rsmi_memory_type_t type, std::uint64_t* bytes), \
    (device, type, bytes), rsmi_dev_memory_total_get) \
  X(DevMemoryUsageGet, Optional, (std::uint32_t device, rsmi_memory_type_t type, std::uint64_t* bytes), \
    (device, type, bytes), rsmi_dev_memory_usage_get) \
  X(DevTempMetricGet, Optional, (std::uint32_t device, std::uint32_t sensor, rsmi_temperature_metric_t metric, std::int64_t* millidegrees), \
    (device, sensor, metric, millidegrees), rsmi_dev_temp_metric_get) \
  X(DevGpuClkFreqGet, Optional, (std::uint32_t device, rsmi_clk_type_t type, rsmi_frequencies_t* frequencies), \
    (device, type, frequencies), rsmi_dev_gpu_clk_freq_get) \
  X(DevPowerCapGet, Optional, (std::uint32_t device, std::uint32_t sensor, std::uint64_t* microwatts), \
    (device, sensor, microwatts), rsmi_dev_power_cap_get) \
  X(DevPowerCapDefaultGet, Optional, (std::uint32_t device, std::uint64_t* microwatts), \
    (device, microwatts), rsmi_dev_power_cap_default_get) \
  X(DevPowerCapRangeGet, Optional, (std::uint32_t device, std::uint32_t sensor, std::uint64_t* max_microwatts, std::uint64_t* min_microwatts), \
    (device, sensor, max_microwatts, min_microwatts), rsmi_dev_power_cap_range_get) \
  X(DevPowerCapSet, Optional, (std::uint32_t device, std::uint32_t sensor, std::uint64_t microwatts), \
    (device, sensor, microwatts), rsmi_dev_power_cap_set) \
  X(ComputeProcessInfoGet, Optional, (rsmi_process_info_t* processes, std::uint32_t* count), \
    (processes, count), rsmi_compute_process_info_get) \
  X(ComputeProcessGpusGet, Optional, (std::uint32_t pid, std::uint32_t* devices, std::uint32_t* count), \
    (pid, devices, count), rsmi_compute_process_gpus_get)
// clang-format on
