// An initialised AMD library and its GPUs: AMD SMI where it works, else ROCm SMI (docs/amd.md).
// Device is the same typed, allocation-free view over either library, so the code above never
// asks which one answered.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amd/library.hpp"
#include "core/error.hpp"

namespace gpuscope::amd {

enum class Which { AmdSmi, RocmSmi };

// The power cap and its range, microwatts.
struct PowerCap {
  std::uint64_t current_uw = 0;
  std::optional<std::uint64_t> default_uw;
  std::optional<std::uint64_t> min_uw;
  std::optional<std::uint64_t> max_uw;
};

// The energy accumulator as read: the raw count, its unit and the driver's time stamp.
struct EnergyCount {
  std::uint64_t count = 0;
  double resolution_uj = 0;  // µJ per count
  std::uint64_t timestamp_ns = 0;
};

// Engine activity, percent. umc (the memory controller) and mm (multimedia) are AMD SMI's; ROCm
// SMI gives gfx and the memory busy percent, reported as umc.
struct Activity {
  unsigned gfx = 0;
  std::optional<unsigned> umc;
  std::optional<unsigned> mm;
};

// One process on the GPU: its pid, the VRAM it holds (bytes) and the graphics engine time it has
// used (ns). AMD SMI's list says all three; ROCm SMI's says no engine time, and VRAM only for
// the whole process (so here only when it uses this GPU alone).
struct ProcessUse {
  std::uint32_t pid = 0;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> gfx_ns;
};

// What gpuscope reads of the driver's GPU metrics table (amdsmi_get_gpu_metrics_info); a member
// the GPU's table format lacks (all ones) is absent.
struct MetricsTable {
  std::optional<std::uint64_t> xgmi_read_kb;           // summed over the links
  std::optional<std::uint64_t> xgmi_write_kb;          // summed over the links
  std::optional<std::uint64_t> indep_throttle_status;  // the ASIC-independent throttler bits
};

enum class Sensor { Edge, Hotspot, Memory };

// What a failed call means to a reader: the GPU cannot answer it (not supported, not
// implemented, no such entry), it may not be asked (permission), or it failed this time.
enum class FailureKind { Unsupported, Permission, Transient };
FailureKind classify(Which which, const Failure& failure);

class Device {
 public:
  virtual ~Device() = default;
  virtual Expected<std::string> name() const = 0;
  // AMD SMI's UUID; ROCm SMI's unique id as 16 hex digits.
  virtual Expected<std::string> uuid() const = 0;
  virtual Expected<std::string> pci_bus_id() const = 0;  // "0000:c1:00.0"
  virtual Expected<std::uint64_t> memory_total_bytes() const = 0;
  virtual Expected<std::uint64_t> memory_used_bytes() const = 0;
  virtual Expected<PowerCap> power_cap() const = 0;
  virtual Status set_power_cap(std::uint64_t microwatts) const = 0;
  virtual Expected<double> average_power_w() const = 0;
  virtual Expected<EnergyCount> energy() const = 0;
  virtual Expected<Activity> activity() const = 0;
  virtual Expected<MetricsTable> metrics_table() const = 0;
  virtual Expected<double> temperature_c(Sensor sensor) const = 0;
  virtual Expected<unsigned> max_gfx_clock_mhz() const = 0;
  virtual Expected<unsigned> gfx_clock_mhz() const = 0;
  // The processes using the GPU; ROCm SMI's list is not used (not supported: docs/amd.md).
  virtual Expected<std::vector<ProcessUse>> processes() const = 0;
  // "rsmi_dev_power_ave_get: not supported (ROCm SMI status 2)".
  virtual std::string describe(const Failure& failure) const = 0;
  // The library that answers for this device.
  virtual Which which() const = 0;
  FailureKind classify(const Failure& failure) const { return amd::classify(which(), failure); }
};

struct OpenOptions {
  // A library given by path (GPUSCOPE_AMD_SMI_LIBRARY, GPUSCOPE_ROCM_SMI_LIBRARY, or the simulated
  // ones); empty: the system's. When only one is given, only that one is tried.
  std::string amd_smi_path;
  std::string rocm_smi_path;
  bool simulated = false;
  // The sysfs root for the diagnosis when no GPU is found ("/" on a real machine; the simulated
  // libraries' GPUs have none, so it is not read for them).
  std::filesystem::path sysfs_root = "/";
};

class Session {
 public:
  // Opens and initialises AMD SMI, else ROCm SMI, and lists the AMD GPUs. Throws Error: no
  // library; or no_amd_gpu_error's diagnosis (no AMD GPU, the amdgpu driver not loaded,
  // permission denied, or the library's own failure).
  static std::unique_ptr<Session> open(const OpenOptions& options);

  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Which which() const { return which_; }
  const char* library_name() const { return which_ == Which::AmdSmi ? "AMD SMI" : "ROCm SMI"; }
  const std::string& library_path() const { return path_; }
  const std::optional<std::string>& library_version() const { return version_; }
  // Why AMD SMI was not used when ROCm SMI answers (empty otherwise).
  const std::string& fallback_reason() const { return fallback_reason_; }
  const std::vector<std::unique_ptr<Device>>& devices() const { return devices_; }

 private:
  Session() = default;
  struct Attempt;
  static std::unique_ptr<Session> try_amd_smi(std::shared_ptr<const AmdSmiLibrary> library,
                                              Attempt& attempt);
  static std::unique_ptr<Session> try_rocm_smi(std::shared_ptr<const RocmSmiLibrary> library,
                                               Attempt& attempt);

  Which which_ = Which::AmdSmi;
  std::string path_;
  std::optional<std::string> version_;
  std::string fallback_reason_;
  std::shared_ptr<const AmdSmiLibrary> amd_smi_;
  std::shared_ptr<const RocmSmiLibrary> rocm_smi_;
  std::vector<std::unique_ptr<Device>> devices_;
};

// Whether `error` is Session::open's "no AMD SMI or ROCm SMI library found".
bool is_no_amd_library(const Error& error);

}  // namespace gpuscope::amd
