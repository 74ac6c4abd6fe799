// A GPU's hardware description: the built-in models and what a scenario may override.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::sim {

struct PowerSpec {
  double min_w = 0;      // lowest settable limit
  double max_w = 0;      // highest settable limit, also the board's peak draw
  double default_w = 0;  // limit after boot
  double idle_w = 0;     // draw with no work
};

struct ClockSpec {
  unsigned max_sm_mhz = 0;   // SM and graphics clock at full speed
  unsigned idle_sm_mhz = 0;  // SM and graphics clock when no kernel runs
  unsigned mem_mhz = 0;      // memory clock (constant: HBM does not scale with load here)
  unsigned video_mhz = 0;    // video clock (constant)
};

struct ThermalSpec {
  double idle_c = 0;           // temperature with no work
  double c_per_w = 0;          // steady-state rise per watt above idle
  double tau_s = 0;            // first-order time constant
  double slowdown_c = 0;       // software thermal slowdown threshold
  double hw_slowdown_c = 0;    // hardware thermal slowdown threshold
  double memory_offset_c = 0;  // HBM temperature (field 82) minus GPU temperature
};

// How nvmlDeviceGetPowerUsage reports power. Yang et al. (SC'24): on Ampere and newer, except
// GA100, it is a 1 s average; on GA100 (A100) it is the latest 100 ms reading.
enum class PowerUsageMode { OneSecondAverage, LatestBucket };

struct GpuSpec {
  std::string model;  // built-in model key, e.g. "H100-SXM5-80GB"
  std::string name;   // nvmlDeviceGetName
  unsigned architecture = 0;
  int cc_major = 0;
  int cc_minor = 0;
  unsigned memory_mib = 0;     // total framebuffer
  unsigned reserved_mib = 0;   // held by the driver (nvmlMemory_v2_t::reserved)
  unsigned pci_device_id = 0;  // (device << 16) | vendor
  unsigned pci_subsystem_id = 0;
  PowerSpec power;
  ClockSpec clocks;
  ThermalSpec thermal;
  bool gpm = false;
  bool nvlink = false;
  unsigned nvlink_links = 0;  // NVLink links (per-link scopes of the throughput fields 138-141)
  bool ecc =
      true;  // ECC memory enabled (datacenter GPUs); without it the ECC calls say NOT_SUPPORTED
  bool module_power = false;  // Grace Hopper: power fields accept scopeId MODULE
  double module_extra_w = 0;  // Grace CPU and LPDDR draw added for the MODULE scope
  PowerUsageMode power_usage_mode = PowerUsageMode::OneSecondAverage;
  std::vector<unsigned> unsupported_fields;  // field ids the model's driver does not report
};

// What an AMD model adds (sim/amd_models.cpp).
struct AmdSpec {
  unsigned gcds_per_card = 1;             // MI250X: 2 GCDs, each a device of its own
  unsigned device_id = 0;                 // PCI device id (vendor 0x1002)
  unsigned energy_counter_bits = 64;      // the accumulator wraps at 2^bits counts
  unsigned xgmi_links = 0;                // links with read/write counters in the metrics table
  unsigned metrics_content_revision = 0;  // the gpu_metrics table's v1.x
};

// The built-in model with this key, or nullptr.
const GpuSpec* find_builtin_model(std::string_view key);

// All built-in model keys, for error messages and docs.
std::vector<std::string> builtin_model_keys();

// The built-in AMD models ("MI250X", "MI300X"): the GPU model's part (per device: one GCD of an
// MI250X) and AMD's extras; false when `key` is not one.
bool find_amd_model(std::string_view key, GpuSpec& spec, AmdSpec& amd);
std::vector<std::string> amd_model_keys();

}  // namespace gpuscope::sim
