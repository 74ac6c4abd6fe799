// Identity, memory, thermal, clock and activity entry points.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/api.hpp"
#include "sim/api_util.hpp"
#include "sim/driver.hpp"

namespace gpuscope::sim {
namespace {

constexpr unsigned long long kMiB = 1024ULL * 1024ULL;

// Every device call has this shape: run fn on the device after the common checks.
template <class Fn>
nvmlReturn_t on_device(Entry entry, nvmlDevice_t device, Fn&& fn) {
  return process_driver().device_call(entry, device, std::forward<Fn>(fn));
}

template <class Fn>
nvmlReturn_t on_gpu_or_instance(Entry entry, nvmlDevice_t device, Fn&& fn) {
  return process_driver().instance_call(entry, device, std::forward<Fn>(fn));
}

struct MemoryFigures {
  unsigned long long total, reserved, used, free;
};

MemoryFigures memory_figures(const GpuModel& model) {
  const GpuSpec& spec = model.config().spec;
  MemoryFigures figures{};
  figures.total = spec.memory_mib * kMiB;
  figures.reserved = spec.reserved_mib * kMiB;
  figures.used =
      static_cast<unsigned long long>(std::llround(model.bucket().memory_used_mib)) * kMiB;
  figures.used = std::min(figures.used, figures.total - figures.reserved);
  figures.free = figures.total - figures.reserved - figures.used;
  return figures;
}

// A MIG instance's memory: its profile's, none reserved.
MemoryFigures memory_figures(const MigInstance& instance) {
  MemoryFigures figures{};
  figures.total = instance.profile().memory_mib * kMiB;
  figures.reserved = 0;
  figures.used = static_cast<unsigned long long>(std::llround(instance.memory_used_mib())) * kMiB;
  figures.used = std::min(figures.used, figures.total);
  figures.free = figures.total - figures.used;
  return figures;
}

// The memory a call reports: a MIG instance's; a GPU in "mig" mode its instances' sum, and only to
// root (nvml.h: the aggregate needs privileges); any other GPU its own.
nvmlReturn_t memory_of(const SimDevice& d, const MigInstance* instance, const CallContext& call,
                       MemoryFigures& out) {
  if (instance != nullptr) {
    out = memory_figures(*instance);
    return nvml::kSuccess;
  }
  out = memory_figures(d.model);
  if (!d.model.config().mig) return nvml::kSuccess;
  if (!process_driver().privileged()) return nvml::kErrorNoPermission;
  unsigned long long used = 0;
  for (const MigInstance& each : d.instances) {
    if (each.live_at(call.scenario_ns)) used += memory_figures(each).used;
  }
  out.used = std::min(used, out.total - out.reserved);
  out.free = out.total - out.reserved - out.used;
  return nvml::kSuccess;
}

// A process a test names in the file GPUSCOPE_SIM_PROCESSES_FILE, read at every call so a test can
// point the driver at a process that starts later (a container's). One process per line,
// "GPU PID [USED_MIB [GPU_INSTANCE_ID]]"; '#' starts a comment; a line that does not parse is
// ignored. The GPU instance id places it in a "mig" instance of that GPU.
struct FileProcess {
  ProcessSpec process;
  std::optional<unsigned> gpu_instance_id;
};

std::vector<FileProcess> file_processes(std::size_t gpu_index) {
  std::vector<FileProcess> out;
  const char* path = std::getenv("GPUSCOPE_SIM_PROCESSES_FILE");
  if (path == nullptr || *path == '\0') return out;
  std::ifstream file(path);
  std::string line;
  for (int lines = 0; lines < 4096 && std::getline(file, line); ++lines) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream fields(line);
    unsigned long gpu = 0;
    unsigned long pid = 0;
    unsigned long mib = 0;
    unsigned long instance = 0;
    if (!(fields >> gpu >> pid)) continue;
    if (!(fields >> mib)) mib = 0;
    const bool in_instance = static_cast<bool>(fields >> instance) && instance <= 14;
    if (gpu != gpu_index || pid == 0 || pid > 4194304 || mib > (1UL << 24U)) continue;
    FileProcess entry{{static_cast<unsigned>(pid), static_cast<unsigned>(mib)}, std::nullopt};
    if (in_instance) entry.gpu_instance_id = static_cast<unsigned>(instance);
    out.push_back(entry);
  }
  return out;
}

// Appends process unless its pid is listed already.
void add_unique(std::vector<ProcessSpec>& out, const ProcessSpec& process) {
  const bool listed = std::any_of(out.begin(), out.end(),
                                  [&](const ProcessSpec& p) { return p.pid == process.pid; });
  if (!listed) out.push_back(process);
}

// The processes on a GPU: the scenario's, then those of GPUSCOPE_SIM_PROCESSES_FILE.
std::vector<ProcessSpec> running_processes(const SimDevice& d) {
  std::vector<ProcessSpec> out = d.model.config().processes;
  for (const FileProcess& entry : file_processes(d.handle.index)) add_unique(out, entry.process);
  return out;
}

// A MIG instance's processes: the scenario's, then the file's that name its GPU instance id.
void append_instance_processes(const MigInstance& instance, const std::vector<FileProcess>& file,
                               std::vector<nvmlProcessInfo_t>& out) {
  std::vector<ProcessSpec> processes = instance.spec().processes;
  for (const FileProcess& entry : file) {
    if (entry.gpu_instance_id == instance.spec().gpu_instance_id) {
      add_unique(processes, entry.process);
    }
  }
  for (const ProcessSpec& process : processes) {
    out.push_back({process.pid, process.used_memory_mib * kMiB, instance.spec().gpu_instance_id,
                   instance.spec().compute_instance_id});
  }
}

// The processes a call lists: a MIG instance's; on a GPU in "mig" mode all its instances' (only to
// root, as nvml.h says), else the GPU's own, which are in no instance (ids 0xFFFFFFFF).
nvmlReturn_t process_list(const SimDevice& d, const MigInstance* mig, const CallContext& call,
                          std::vector<nvmlProcessInfo_t>& out) {
  if (mig != nullptr) {
    append_instance_processes(*mig, file_processes(d.handle.index), out);
    return nvml::kSuccess;
  }
  if (d.model.config().mig) {
    if (!process_driver().privileged()) return nvml::kErrorNoPermission;
    const std::vector<FileProcess> file = file_processes(d.handle.index);
    for (const MigInstance& instance : d.instances) {
      if (instance.live_at(call.scenario_ns)) append_instance_processes(instance, file, out);
    }
    return nvml::kSuccess;
  }
  for (const ProcessSpec& process : running_processes(d)) {
    out.push_back(
        {process.pid, process.used_memory_mib * kMiB, nvml::kNoInstanceId, nvml::kNoInstanceId});
  }
  return nvml::kSuccess;
}

}  // namespace

nvmlReturn_t DeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return on_gpu_or_instance(Entry::DeviceGetName, device,
                            [&](SimDevice& d, MigInstance* mig, const CallContext&) {
                              const std::string& gpu = d.model.config().spec.name;
                              if (mig == nullptr) return copy_string(gpu, name, length);
                              return copy_string(gpu + " MIG " + mig->spec().profile, name, length);
                            });
}

nvmlReturn_t DeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return on_gpu_or_instance(
      Entry::DeviceGetUUID, device, [&](SimDevice& d, MigInstance* mig, const CallContext&) {
        return copy_string(mig != nullptr ? mig->spec().uuid : d.model.config().uuid, uuid, length);
      });
}

nvmlReturn_t DeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return on_device(Entry::DeviceGetPciInfo, device, [&](SimDevice& d, const CallContext&) {
    if (pci == nullptr) return nvml::kErrorInvalidArgument;
    const GpuConfig& config = d.model.config();
    *pci = nvmlPciInfo_t{};
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0",
                  config.pci_domain & 0xFFFFU, config.pci_bus, config.pci_device);
    std::snprintf(pci->busId, sizeof pci->busId, "%s", config.pci_bus_id.c_str());
    pci->domain = config.pci_domain;
    pci->bus = config.pci_bus;
    pci->device = config.pci_device;
    pci->pciDeviceId = config.spec.pci_device_id;
    pci->pciSubSystemId = config.spec.pci_subsystem_id;
    return nvml::kSuccess;
  });
}

nvmlReturn_t DeviceGetArchitecture(nvmlDevice_t device, unsigned int* arch) {
  return on_device(Entry::DeviceGetArchitecture, device, [&](SimDevice& d, const CallContext&) {
    if (arch == nullptr) return nvml::kErrorInvalidArgument;
    *arch = d.model.config().spec.architecture;
    return nvml::kSuccess;
  });
}

nvmlReturn_t DeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  return on_device(Entry::DeviceGetCudaComputeCapability, device,
                   [&](SimDevice& d, const CallContext&) {
                     if (major == nullptr || minor == nullptr) return nvml::kErrorInvalidArgument;
                     *major = d.model.config().spec.cc_major;
                     *minor = d.model.config().spec.cc_minor;
                     return nvml::kSuccess;
                   });
}

nvmlReturn_t DeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return on_gpu_or_instance(
      Entry::DeviceGetMemoryInfo, device,
      [&](SimDevice& d, MigInstance* mig, const CallContext& call) {
        if (memory == nullptr) return nvml::kErrorInvalidArgument;
        MemoryFigures figures{};
        const nvmlReturn_t result = memory_of(d, mig, call, figures);
        if (result != nvml::kSuccess) return result;
        // Version 1 counts the driver's reservation as used, as the real
        // call does.
        *memory = {figures.total, figures.free, figures.used + figures.reserved};
        return nvml::kSuccess;
      });
}

nvmlReturn_t DeviceGetMemoryInfoV2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  return on_gpu_or_instance(Entry::DeviceGetMemoryInfoV2, device,
                            [&](SimDevice& d, MigInstance* mig, const CallContext& call) {
                              if (memory == nullptr) return nvml::kErrorInvalidArgument;
                              if (memory->version != nvml::kMemoryV2Version) {
                                return nvml::kErrorArgumentVersionMismatch;
                              }
                              MemoryFigures figures{};
                              const nvmlReturn_t result = memory_of(d, mig, call, figures);
                              if (result != nvml::kSuccess) return result;
                              memory->total = figures.total;
                              memory->reserved = figures.reserved;
                              memory->free = figures.free;
                              memory->used = figures.used;
                              return nvml::kSuccess;
                            });
}

nvmlReturn_t DeviceGetTemperature(nvmlDevice_t device, unsigned int sensor, unsigned int* celsius) {
  return on_device(Entry::DeviceGetTemperature, device, [&](SimDevice& d, const CallContext&) {
    if (celsius == nullptr || sensor != nvml::kTemperatureGpu) return nvml::kErrorInvalidArgument;
    *celsius =
        static_cast<unsigned int>(std::lround(std::max(d.model.bucket().temperature_c, 0.0)));
    return nvml::kSuccess;
  });
}

// Graphics and SM share one clock domain here; memory and video clocks are fixed.
nvmlReturn_t clock_of(const ClockSpec& clocks, unsigned int type, unsigned int sm_mhz,
                      unsigned int* mhz) {
  if (mhz == nullptr) return nvml::kErrorInvalidArgument;
  switch (type) {
    case nvml::kClockGraphics:
    case nvml::kClockSm:
      *mhz = sm_mhz;
      return nvml::kSuccess;
    case nvml::kClockMem:
      *mhz = clocks.mem_mhz;
      return nvml::kSuccess;
    case nvml::kClockVideo:
      *mhz = clocks.video_mhz;
      return nvml::kSuccess;
    default:
      return nvml::kErrorInvalidArgument;
  }
}

nvmlReturn_t DeviceGetClockInfo(nvmlDevice_t device, unsigned int type, unsigned int* mhz) {
  return on_device(Entry::DeviceGetClockInfo, device, [&](SimDevice& d, const CallContext&) {
    return clock_of(d.model.config().spec.clocks, type, d.model.sm_clock_mhz(), mhz);
  });
}

nvmlReturn_t DeviceGetMaxClockInfo(nvmlDevice_t device, unsigned int type, unsigned int* mhz) {
  return on_device(Entry::DeviceGetMaxClockInfo, device, [&](SimDevice& d, const CallContext&) {
    const ClockSpec& clocks = d.model.config().spec.clocks;
    return clock_of(clocks, type, clocks.max_sm_mhz, mhz);
  });
}

nvmlReturn_t DeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  return on_device(Entry::DeviceGetUtilizationRates, device, [&](SimDevice& d, const CallContext&) {
    if (utilization == nullptr) return nvml::kErrorInvalidArgument;
    // nvml.h: not supported on MIG-enabled GPUs (the "mig" key; "mig_devices" stays answered).
    if (d.model.config().mig) return nvml::kErrorNotSupported;
    const Levels& levels = d.model.bucket().levels;
    utilization->gpu = static_cast<unsigned int>(std::lround(levels[index_of(Activity::Util)]));
    utilization->memory =
        static_cast<unsigned int>(std::lround(levels[index_of(Activity::MemUtil)]));
    return nvml::kSuccess;
  });
}

nvmlReturn_t DeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  return on_device(Entry::DeviceGetCurrentClocksEventReasons, device,
                   [&](SimDevice& d, const CallContext&) {
                     if (reasons == nullptr) return nvml::kErrorInvalidArgument;
                     *reasons = d.model.clocks_event_reasons();
                     return nvml::kSuccess;
                   });
}

nvmlReturn_t DeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                              nvmlProcessInfo_t* infos) {
  return on_gpu_or_instance(Entry::DeviceGetComputeRunningProcesses, device,
                            [&](SimDevice& d, MigInstance* mig, const CallContext& call) {
                              if (count == nullptr) return nvml::kErrorInvalidArgument;
                              std::vector<nvmlProcessInfo_t> list;
                              const nvmlReturn_t result = process_list(d, mig, call, list);
                              if (result != nvml::kSuccess) return result;
                              const auto needed = static_cast<unsigned int>(list.size());
                              if (*count < needed || (needed > 0 && infos == nullptr)) {
                                *count = needed;
                                return nvml::kErrorInsufficientSize;
                              }
                              *count = needed;
                              std::copy(list.begin(), list.end(), infos);
                              return nvml::kSuccess;
                            });
}

nvmlReturn_t DeviceGetProcessUtilization(nvmlDevice_t device,
                                         nvmlProcessUtilizationSample_t* samples,
                                         unsigned int* count, unsigned long long since_us) {
  return on_device(
      Entry::DeviceGetProcessUtilization, device, [&](SimDevice& d, const CallContext& call) {
        if (count == nullptr) return nvml::kErrorInvalidArgument;
        // nvml.h: not supported on MIG-enabled GPUs.
        if (d.model.config().mig) return nvml::kErrorNotSupported;
        const auto processes = running_processes(d);
        const auto now_us = static_cast<unsigned long long>(call.realtime_ns / 1000);
        // As the driver: nothing newer than `since_us` is NOT_FOUND.
        if (processes.empty() || now_us <= since_us) return nvml::kErrorNotFound;
        const auto needed = static_cast<unsigned int>(processes.size());
        if (*count < needed || samples == nullptr) {
          *count = needed;
          return nvml::kErrorInsufficientSize;
        }
        *count = needed;
        // The GPU's activity shared evenly by the processes on it: the simulated GPU does not
        // know which of them did the work.
        const Levels& levels = d.model.bucket().levels;
        const double share = 1.0 / static_cast<double>(needed);
        for (unsigned int i = 0; i < needed; ++i) {
          samples[i] = {};
          samples[i].pid = processes[i].pid;
          samples[i].timeStamp = now_us;
          samples[i].smUtil =
              static_cast<unsigned int>(std::lround(levels[index_of(Activity::Util)] * share));
          samples[i].memUtil =
              static_cast<unsigned int>(std::lround(levels[index_of(Activity::MemUtil)] * share));
        }
        return nvml::kSuccess;
      });
}

}  // namespace gpuscope::sim
