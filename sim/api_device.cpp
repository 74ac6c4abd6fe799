// Identity, memory, thermal, clock and activity entry points.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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

// The processes on a GPU: the scenario's, then those a test names in the file
// GPUSCOPE_SIM_PROCESSES_FILE, read at every call so a test can point the driver at a process
// that starts later (a container's). One process per line, "GPU PID [USED_MIB]"; '#' starts a
// comment; a line that does not parse is ignored, as is a pid listed twice.
std::vector<ProcessSpec> running_processes(const SimDevice& d) {
  std::vector<ProcessSpec> out = d.model.config().processes;
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
    if (!(fields >> gpu >> pid)) continue;
    if (!(fields >> mib)) mib = 0;
    if (gpu != d.handle.index || pid == 0 || pid > 4194304 || mib > (1UL << 24U)) continue;
    const bool listed =
        std::any_of(out.begin(), out.end(), [&](const ProcessSpec& p) { return p.pid == pid; });
    if (!listed) out.push_back({static_cast<unsigned>(pid), static_cast<unsigned>(mib)});
  }
  return out;
}

}  // namespace

nvmlReturn_t DeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return on_device(Entry::DeviceGetName, device, [&](SimDevice& d, const CallContext&) {
    return copy_string(d.model.config().spec.name, name, length);
  });
}

nvmlReturn_t DeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return on_device(Entry::DeviceGetUUID, device, [&](SimDevice& d, const CallContext&) {
    return copy_string(d.model.config().uuid, uuid, length);
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
  return on_device(Entry::DeviceGetMemoryInfo, device, [&](SimDevice& d, const CallContext&) {
    if (memory == nullptr) return nvml::kErrorInvalidArgument;
    // Version 1 counts the driver's reservation as used, as the real call does.
    const MemoryFigures figures = memory_figures(d.model);
    *memory = {figures.total, figures.free, figures.used + figures.reserved};
    return nvml::kSuccess;
  });
}

nvmlReturn_t DeviceGetMemoryInfoV2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  return on_device(Entry::DeviceGetMemoryInfoV2, device, [&](SimDevice& d, const CallContext&) {
    if (memory == nullptr) return nvml::kErrorInvalidArgument;
    if (memory->version != nvml::kMemoryV2Version) return nvml::kErrorArgumentVersionMismatch;
    const MemoryFigures figures = memory_figures(d.model);
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
    const Levels& levels = d.model.bucket().levels;
    utilization->gpu = static_cast<unsigned int>(std::lround(levels[index_of(Metric::kUtil)]));
    utilization->memory =
        static_cast<unsigned int>(std::lround(levels[index_of(Metric::kMemUtil)]));
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
  return on_device(Entry::DeviceGetComputeRunningProcesses, device,
                   [&](SimDevice& d, const CallContext&) {
                     if (count == nullptr) return nvml::kErrorInvalidArgument;
                     const auto processes = running_processes(d);
                     const auto needed = static_cast<unsigned int>(processes.size());
                     if (*count < needed || (needed > 0 && infos == nullptr)) {
                       *count = needed;
                       return nvml::kErrorInsufficientSize;
                     }
                     *count = needed;
                     for (unsigned int i = 0; i < needed; ++i) {
                       // 0xFFFFFFFF: not in a MIG instance, as the driver reports it.
                       infos[i] = {processes[i].pid, processes[i].used_memory_mib * kMiB,
                                   0xFFFFFFFFU, 0xFFFFFFFFU};
                     }
                     return nvml::kSuccess;
                   });
}

nvmlReturn_t DeviceGetProcessUtilization(nvmlDevice_t device,
                                         nvmlProcessUtilizationSample_t* samples,
                                         unsigned int* count, unsigned long long since_us) {
  return on_device(
      Entry::DeviceGetProcessUtilization, device, [&](SimDevice& d, const CallContext& call) {
        if (count == nullptr) return nvml::kErrorInvalidArgument;
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
              static_cast<unsigned int>(std::lround(levels[index_of(Metric::kUtil)] * share));
          samples[i].memUtil =
              static_cast<unsigned int>(std::lround(levels[index_of(Metric::kMemUtil)] * share));
        }
        return nvml::kSuccess;
      });
}

}  // namespace gpuscope::sim
