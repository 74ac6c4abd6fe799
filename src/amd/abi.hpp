// The C ABIs of AMD SMI (libamd_smi.so) and ROCm SMI (librocm_smi64.so) as gpuscope uses them:
// types, constants and struct layouts, declared here from AMD's published headers (docs/amd.md
// names them: amdsmi.h of ROCm 6.2.2, library version 24.6.3; rocm_smi.h of ROCm 5.2.3, the
// version Debian 12 packages). The sizes and offsets pinned below were checked against those
// headers. Only this folder and sim/ include this file.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// ---- AMD SMI ------------------------------------------------------------------------------------

// C enums whose values reach 0xFFFFFFFF: unsigned int on every ABI gpuscope builds for.
using amdsmi_status_t = std::uint32_t;
using processor_type_t = std::uint32_t;
using amdsmi_clk_type_t = std::uint32_t;
using amdsmi_temperature_type_t = std::uint32_t;
using amdsmi_temperature_metric_t = std::uint32_t;
using amdsmi_memory_type_t = std::uint32_t;
using amdsmi_processor_handle = void*;
using amdsmi_socket_handle = void*;

// amdsmi_bdf_t: a union of one 64-bit word and its bit fields, function (bits 0-2), device (3-7),
// bus (8-15) and domain (16-63).
struct amdsmi_bdf_t {
  std::uint64_t as_uint;
};

struct amdsmi_version_t {
  std::uint32_t year;
  std::uint32_t major;
  std::uint32_t minor;
  std::uint32_t release;
  const char* build;
};

// amdsmi_get_gpu_activity: percent, 0-100.
struct amdsmi_engine_usage_t {
  std::uint32_t gfx_activity;
  std::uint32_t umc_activity;
  std::uint32_t mm_activity;
  std::uint32_t reserved[13];
};

// amdsmi_get_power_info: watts and millivolts.
struct amdsmi_power_info_t {
  std::uint32_t current_socket_power;
  std::uint32_t average_socket_power;
  std::uint32_t gfx_voltage;
  std::uint32_t soc_voltage;
  std::uint32_t mem_voltage;
  std::uint32_t power_limit;
  std::uint32_t reserved[11];
};

// amdsmi_get_clock_info: MHz.
struct amdsmi_clk_info_t {
  std::uint32_t clk;
  std::uint32_t min_clk;
  std::uint32_t max_clk;
  std::uint8_t clk_locked;
  std::uint8_t clk_deep_sleep;
  std::uint32_t reserved[4];
};

// amdsmi_get_gpu_vram_usage: MB.
struct amdsmi_vram_usage_t {
  std::uint32_t vram_total;
  std::uint32_t vram_used;
  std::uint32_t reserved[2];
};

// amdsmi_get_power_cap_info: microwatts (dpm_cap: MHz).
struct amdsmi_power_cap_info_t {
  std::uint64_t power_cap;
  std::uint64_t default_power_cap;
  std::uint64_t dpm_cap;
  std::uint64_t min_power_cap;
  std::uint64_t max_power_cap;
  std::uint64_t reserved[3];
};

struct amdsmi_asic_info_t {
  char market_name[256];
  std::uint32_t vendor_id;
  char vendor_name[64];
  std::uint32_t subvendor_id;
  std::uint64_t device_id;
  std::uint32_t rev_id;
  char asic_serial[32];
  std::uint32_t oam_id;  // 0xFFFF when not supported
  std::uint32_t reserved[18];
};

// One process of amdsmi_get_gpu_process_list: memory in bytes, engine time in ns.
struct amdsmi_proc_info_t {
  char name[32];
  std::uint32_t pid;
  std::uint64_t mem;
  struct {
    std::uint64_t gfx;
    std::uint64_t enc;
    std::uint32_t reserved[12];
  } engine_usage;
  struct {
    std::uint64_t gtt_mem;
    std::uint64_t cpu_mem;
    std::uint64_t vram_mem;
    std::uint32_t reserved[10];
  } memory_usage;
  char container_name[32];
  std::uint32_t reserved[4];
};

struct amd_metrics_table_header_t {
  std::uint16_t structure_size;
  std::uint8_t format_revision;
  std::uint8_t content_revision;
};

// amdsmi_get_gpu_metrics_info: the driver's gpu_metrics table in AMD SMI's union layout (every
// format version's members; a member a GPU's format lacks holds all ones).
struct amdsmi_gpu_metrics_t {
  amd_metrics_table_header_t common_header;
  // v1.0: temperatures (C), activity (%), power (W), energy (15.3 uJ units), clocks (MHz)
  std::uint16_t temperature_edge;
  std::uint16_t temperature_hotspot;
  std::uint16_t temperature_mem;
  std::uint16_t temperature_vrgfx;
  std::uint16_t temperature_vrsoc;
  std::uint16_t temperature_vrmem;
  std::uint16_t average_gfx_activity;
  std::uint16_t average_umc_activity;
  std::uint16_t average_mm_activity;
  std::uint16_t average_socket_power;
  std::uint64_t energy_accumulator;
  std::uint64_t system_clock_counter;  // ns
  std::uint16_t average_gfxclk_frequency;
  std::uint16_t average_socclk_frequency;
  std::uint16_t average_uclk_frequency;
  std::uint16_t average_vclk0_frequency;
  std::uint16_t average_dclk0_frequency;
  std::uint16_t average_vclk1_frequency;
  std::uint16_t average_dclk1_frequency;
  std::uint16_t current_gfxclk;
  std::uint16_t current_socclk;
  std::uint16_t current_uclk;
  std::uint16_t current_vclk0;
  std::uint16_t current_dclk0;
  std::uint16_t current_vclk1;
  std::uint16_t current_dclk1;
  std::uint32_t throttle_status;
  std::uint16_t current_fan_speed;
  std::uint16_t pcie_link_width;
  std::uint16_t pcie_link_speed;  // 0.1 GT/s
  // v1.1
  std::uint32_t gfx_activity_acc;
  std::uint32_t mem_activity_acc;
  std::uint16_t temperature_hbm[4];
  // v1.2
  std::uint64_t firmware_timestamp;  // 10 ns
  // v1.3
  std::uint16_t voltage_soc;
  std::uint16_t voltage_gfx;
  std::uint16_t voltage_mem;
  std::uint64_t indep_throttle_status;
  // v1.4
  std::uint16_t current_socket_power;  // W
  std::uint16_t vcn_activity[4];
  std::uint32_t gfxclk_lock_status;
  std::uint16_t xgmi_link_width;
  std::uint16_t xgmi_link_speed;  // GB/s
  std::uint64_t pcie_bandwidth_acc;
  std::uint64_t pcie_bandwidth_inst;
  std::uint64_t pcie_l0_to_recov_count_acc;
  std::uint64_t pcie_replay_count_acc;
  std::uint64_t pcie_replay_rover_count_acc;
  std::uint64_t xgmi_read_data_acc[8];   // KB, per link
  std::uint64_t xgmi_write_data_acc[8];  // KB, per link
  std::uint16_t current_gfxclks[8];
  std::uint16_t current_socclks[4];
  std::uint16_t current_vclk0s[4];
  std::uint16_t current_dclk0s[4];
  // v1.5
  std::uint16_t jpeg_activity[32];
  std::uint32_t pcie_nak_sent_count_acc;
  std::uint32_t pcie_nak_rcvd_count_acc;
};

// ---- ROCm SMI -----------------------------------------------------------------------------------

using rsmi_status_t = std::uint32_t;
using rsmi_clk_type_t = std::uint32_t;
using rsmi_temperature_metric_t = std::uint32_t;
using rsmi_memory_type_t = std::uint32_t;

// rsmi_compute_process_info_get: one process using the node's GPUs; vram_usage is its VRAM on
// all of them together.
struct rsmi_process_info_t {
  std::uint32_t process_id;
  std::uint32_t pasid;
  std::uint64_t vram_usage;    // bytes
  std::uint64_t sdma_usage;    // microseconds
  std::uint32_t cu_occupancy;  // percent; 0xFFFFFFFF where the GPU does not say
};

// rsmi_dev_gpu_clk_freq_get: the clock's levels in Hz and the current level's index.
struct rsmi_frequencies_t {
  std::uint32_t num_supported;
  std::uint32_t current;
  std::uint64_t frequency[32];
};

struct rsmi_version_t {
  std::uint32_t major;
  std::uint32_t minor;
  std::uint32_t patch;
  const char* build;
};

}  // extern "C"

namespace gpuscope::amd {

// amdsmi_status_t values.
inline constexpr amdsmi_status_t kAmdSuccess = 0;
inline constexpr amdsmi_status_t kAmdInval = 1;
inline constexpr amdsmi_status_t kAmdNotSupported = 2;
inline constexpr amdsmi_status_t kAmdFailLoadModule = 4;
inline constexpr amdsmi_status_t kAmdDrmError = 6;
inline constexpr amdsmi_status_t kAmdApiFailed = 7;
inline constexpr amdsmi_status_t kAmdNoPerm = 10;
inline constexpr amdsmi_status_t kAmdIo = 12;
inline constexpr amdsmi_status_t kAmdFileError = 14;
inline constexpr amdsmi_status_t kAmdOutOfResources = 15;
inline constexpr amdsmi_status_t kAmdInputOutOfBounds = 17;
inline constexpr amdsmi_status_t kAmdInitError = 18;
inline constexpr amdsmi_status_t kAmdNotFound = 31;
inline constexpr amdsmi_status_t kAmdNotInit = 32;
inline constexpr amdsmi_status_t kAmdDriverNotLoaded = 34;
inline constexpr amdsmi_status_t kAmdNoData = 40;
inline constexpr amdsmi_status_t kAmdInsufficientSize = 41;
inline constexpr amdsmi_status_t kAmdUnknownError = 0xFFFFFFFFU;
// Not AMD SMI's: what the loader reports for an entry point the library does not export.
inline constexpr amdsmi_status_t kAmdFunctionNotFound = 0xFFFFFF00U;

// amdsmi_init_flags_t.
inline constexpr std::uint64_t kAmdInitAmdGpus = 1U << 1U;

// processor_type_t.
inline constexpr processor_type_t kProcessorAmdGpu = 1;

// amdsmi_clk_type_t.
inline constexpr amdsmi_clk_type_t kAmdClkGfx = 0;
inline constexpr amdsmi_clk_type_t kAmdClkSoc = 3;
inline constexpr amdsmi_clk_type_t kAmdClkMem = 4;

// amdsmi_temperature_type_t and amdsmi_temperature_metric_t (values in millidegrees Celsius).
inline constexpr amdsmi_temperature_type_t kAmdTempEdge = 0;
inline constexpr amdsmi_temperature_type_t kAmdTempHotspot = 1;
inline constexpr amdsmi_temperature_type_t kAmdTempVram = 2;
inline constexpr amdsmi_temperature_metric_t kAmdTempCurrent = 0;

// amdsmi_memory_type_t (bytes).
inline constexpr amdsmi_memory_type_t kAmdMemVram = 0;

// The energy counter's unit in µJ: AMD SMI and ROCm SMI report it as the counter's resolution
// (a constant of the libraries, 15.3 in both versions checked).
inline constexpr double kEnergyResolutionUj = 15.3;

// rsmi_status_t values.
inline constexpr rsmi_status_t kRsmiSuccess = 0;
inline constexpr rsmi_status_t kRsmiInvalidArgs = 1;
inline constexpr rsmi_status_t kRsmiNotSupported = 2;
inline constexpr rsmi_status_t kRsmiFileError = 3;
inline constexpr rsmi_status_t kRsmiPermission = 4;
inline constexpr rsmi_status_t kRsmiOutOfResources = 5;
inline constexpr rsmi_status_t kRsmiInternalException = 6;
inline constexpr rsmi_status_t kRsmiInputOutOfBounds = 7;
inline constexpr rsmi_status_t kRsmiInitError = 8;
inline constexpr rsmi_status_t kRsmiNotYetImplemented = 9;
inline constexpr rsmi_status_t kRsmiNotFound = 10;
inline constexpr rsmi_status_t kRsmiInsufficientSize = 11;
inline constexpr rsmi_status_t kRsmiInterrupt = 12;
inline constexpr rsmi_status_t kRsmiUnexpectedSize = 13;
inline constexpr rsmi_status_t kRsmiNoData = 14;
inline constexpr rsmi_status_t kRsmiUnexpectedData = 15;
inline constexpr rsmi_status_t kRsmiBusy = 16;
inline constexpr rsmi_status_t kRsmiRefcountOverflow = 17;
inline constexpr rsmi_status_t kRsmiUnknownError = 0xFFFFFFFFU;
inline constexpr rsmi_status_t kRsmiFunctionNotFound = 0xFFFFFF00U;  // not ROCm SMI's

// rsmi_clk_type_t, rsmi_temperature_type_t (passed as uint32_t), rsmi_temperature_metric_t,
// rsmi_memory_type_t.
inline constexpr rsmi_clk_type_t kRsmiClkSys = 0;
inline constexpr rsmi_clk_type_t kRsmiClkMem = 4;
inline constexpr std::uint32_t kRsmiTempEdge = 0;
inline constexpr std::uint32_t kRsmiTempJunction = 1;
inline constexpr std::uint32_t kRsmiTempMemory = 2;
inline constexpr rsmi_temperature_metric_t kRsmiTempCurrent = 0;
inline constexpr rsmi_memory_type_t kRsmiMemVram = 0;

// Layouts, as the headers give them on x86-64 and aarch64 (LP64).
static_assert(sizeof(amdsmi_engine_usage_t) == 64);
static_assert(sizeof(amdsmi_power_info_t) == 68);
static_assert(sizeof(amdsmi_clk_info_t) == 32);
static_assert(sizeof(amdsmi_vram_usage_t) == 16);
static_assert(sizeof(amdsmi_power_cap_info_t) == 64);
static_assert(sizeof(amdsmi_asic_info_t) == 448);
static_assert(sizeof(amdsmi_proc_info_t) == 224);
static_assert(offsetof(amdsmi_proc_info_t, mem) == 40);
static_assert(offsetof(amdsmi_proc_info_t, container_name) == 176);
static_assert(sizeof(amdsmi_gpu_metrics_t) == 424);
static_assert(offsetof(amdsmi_gpu_metrics_t, energy_accumulator) == 24);
static_assert(offsetof(amdsmi_gpu_metrics_t, system_clock_counter) == 32);
static_assert(offsetof(amdsmi_gpu_metrics_t, throttle_status) == 68);
static_assert(offsetof(amdsmi_gpu_metrics_t, indep_throttle_status) == 112);
static_assert(offsetof(amdsmi_gpu_metrics_t, xgmi_read_data_acc) == 184);
static_assert(offsetof(amdsmi_gpu_metrics_t, xgmi_write_data_acc) == 248);
static_assert(offsetof(amdsmi_gpu_metrics_t, pcie_nak_rcvd_count_acc) == 420);
static_assert(sizeof(amdsmi_version_t) == 24);
static_assert(sizeof(amdsmi_bdf_t) == 8);
static_assert(sizeof(rsmi_frequencies_t) == 264);
static_assert(sizeof(rsmi_process_info_t) == 32);
static_assert(sizeof(rsmi_version_t) == 24);

}  // namespace gpuscope::amd
