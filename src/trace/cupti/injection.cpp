// libgpuscope_cupti.so: the CUPTI injection library of `gpuscope profile --trace-kernels`
// (docs/kernels.md). CUDA loads it into every process of the job that initialises the driver,
// because gpuscope sets CUDA_INJECTION64_PATH, and calls InitializeInjection() from cuInit. It
// enables CUPTI's activity records for kernels, memcpy, memset and devices, asks CUPTI to take
// timestamps from CLOCK_MONOTONIC (the clock of gpuscope's samples), and appends what CUPTI hands
// back to a sidecar file of its own in $GPUSCOPE_TRACE_DIR, which gpuscope imports into the run
// database when the job ends. Only InitializeInjection is exported.
#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "core/clock.hpp"
#include "trace/cupti/activity_records.hpp"
#include "trace/sidecar_writer.hpp"

namespace {

using namespace gpuscope::trace;

// Each CUPTI buffer holds about 19 000 kernel records. Full buffers are handed back at least
// every kFlushPeriodMs; the rest at exit (or lost if the process is killed by a signal).
constexpr std::size_t kBufferBytes = std::size_t{4} << 20;
constexpr std::uint32_t kFlushPeriodMs = 1000;

using DeviceGetFn = int (*)(int* device, int ordinal);
using PciBusIdFn = int (*)(char* bus_id, int length, int device);

// Recursive: CUPTI may hand back a buffer on the thread that is inside one of our calls.
struct State {
  std::recursive_mutex mutex;
  SidecarFile file;
  cupti::ActivityProcessor processor;
  pid_t owner = 0;
  bool active = false;
  bool finished = false;
  std::set<std::uint32_t> pci_written;
  DeviceGetFn device_get = nullptr;
  PciBusIdFn pci_bus_id = nullptr;
};

// Never destroyed: CUPTI may call back while static destructors run.
State& state() {
  static State* s = new State;
  return *s;
}

std::string result_text(CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return text != nullptr ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

std::uint64_t CUPTIAPI monotonic_timestamp() {
  return static_cast<std::uint64_t>(gpuscope::mono_now_ns());
}

// cuptiGetTimestamp between two readings of each of gpuscope's clocks.
CalibrationRecord calibrate(CalibrationPoint point) {
  CalibrationRecord r{};
  const std::int64_t mono0 = gpuscope::mono_now_ns();
  const std::int64_t wall0 = gpuscope::wall_now_ns();
  cuptiGetTimestamp(&r.cupti_ns);
  const std::int64_t wall1 = gpuscope::wall_now_ns();
  const std::int64_t mono1 = gpuscope::mono_now_ns();
  r.mono_ns = mono0 + (mono1 - mono0) / 2;
  r.wall_ns = wall0 + (wall1 - wall0) / 2;
  r.point = static_cast<std::uint32_t>(point);
  r.uncertainty_ns = static_cast<std::uint32_t>((mono1 - mono0) / 2);
  return r;
}

// The process's arguments, NUL-separated as /proc keeps them.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > 4096) text.resize(4096);
  return text;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer,
                               std::size_t /*size*/, std::size_t valid_bytes) {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    if (s.active && !s.finished && getpid() == s.owner) {
      SidecarBatch batch;
      s.processor.process_buffer(buffer, valid_bytes, batch);
      std::size_t dropped = 0;
      if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
          dropped > 0) {
        const DroppedRecord record{dropped};
        batch.add(RecordType::Dropped, record);
      }
      batch.add(RecordType::Calibration, calibrate(CalibrationPoint::Buffer));
      s.file.append(batch);
    }
  }
  std::free(buffer);
}

// At context creation, the CUDA device's PCI address from the driver (the DEVICE activity
// record has the UUID but no PCI address).
void CUPTIAPI on_resource(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_CONTEXT_CREATED) return;
  State& s = state();
  const auto* resource = static_cast<const CUpti_ResourceData*>(data);
  std::uint32_t cuda_device = 0;
  if (resource == nullptr || cuptiGetDeviceId(resource->context, &cuda_device) != CUPTI_SUCCESS) {
    return;
  }
  {
    std::lock_guard lock(s.mutex);
    if (!s.active || s.finished || getpid() != s.owner || s.device_get == nullptr ||
        s.pci_bus_id == nullptr || !s.pci_written.insert(cuda_device).second) {
      return;
    }
  }
  // The driver is asked without holding our lock (CUPTI's thread may want it meanwhile).
  int device = 0;
  char bus_id[64] = {};
  if (s.device_get(&device, static_cast<int>(cuda_device)) != 0 ||
      s.pci_bus_id(bus_id, sizeof(bus_id), device) != 0) {
    return;
  }
  DeviceRecord r{};
  r.cuda_device = cuda_device;
  unsigned domain_id = 0, bus = 0, dev = 0;
  if (std::sscanf(bus_id, "%x:%x:%x", &domain_id, &bus, &dev) != 3) return;
  r.flags = kDeviceHasPci;
  r.pci_domain = domain_id;
  r.pci_bus = bus;
  r.pci_device = dev;
  SidecarBatch batch;
  batch.add(RecordType::Device, r);
  std::lock_guard lock(s.mutex);
  if (s.active && !s.finished) s.file.append(batch);
}

// At exit: every buffer CUPTI still holds, the end calibration and the end record.
void finish() {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    if (!s.active || s.finished || getpid() != s.owner) return;  // a fork's child: its parent's
  }
  // Without the lock: the buffers come back through buffer_completed, which takes it.
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(s.mutex);
  SidecarBatch batch;
  if (flushed != CUPTI_SUCCESS) batch.note("cuptiActivityFlushAll failed: " + result_text(flushed));
  batch.add(RecordType::Calibration, calibrate(CalibrationPoint::End));
  const EndRecord end{gpuscope::mono_now_ns()};
  batch.add(RecordType::End, end);
  s.file.append(batch);
  s.file.close();
  s.finished = true;
}

void enable(CUpti_ActivityKind kind, const char* name, SidecarBatch& batch) {
  const CUptiResult result = cuptiActivityEnable(kind);
  if (result != CUPTI_SUCCESS) {
    batch.note(std::string("cuptiActivityEnable(") + name + ") failed: " + result_text(result));
  }
}

// What the job asked for (GPUSCOPE_TRACE_KINDS: "kernels", "nvtx" or both; unset: kernels, as
// before the variable existed).
struct Kinds {
  bool kernels = true;
  bool nvtx = false;
};

Kinds requested_kinds() {
  const char* text = std::getenv(kTraceKindsVariable);
  if (text == nullptr) return {};
  const std::string kinds = text;
  return {kinds.find("kernels") != std::string::npos, kinds.find("nvtx") != std::string::npos};
}

// Opens this process's sidecar file in `dir` and makes this process its owner; false (said on
// stderr) when it cannot be opened.
bool open_sidecar(State& s, const char* dir, const char (&host)[64], pid_t pid) {
  if (!s.file.open(dir, host, pid)) {
    std::fprintf(stderr, "gpuscope-cupti: %s; this process is not traced\n",
                 s.file.error().c_str());
    return false;
  }
  s.owner = pid;
  s.active = true;
  return true;
}

// Asks CUPTI for CLOCK_MONOTONIC timestamps, before any activity is enabled, and writes the
// file's first records, before any buffer can come back: the process (with the clock its
// timestamps are on) and the start calibration. Returns CUPTI's answer to the clock request.
CUptiResult write_process_start(State& s, const char (&host)[64], pid_t pid) {
  SidecarBatch batch;
  ProcessRecord process{};
  process.pid = pid;
  process.parent_pid = getppid();
  process.cupti_version = CUPTI_API_VERSION;
  // When CUPTI refuses, its own clock is converted through the calibration records instead.
  const CUptiResult clock = cuptiActivityRegisterTimestampCallback(monotonic_timestamp);
  process.timestamp_source = static_cast<std::uint32_t>(
      clock == CUPTI_SUCCESS ? TimestampSource::Monotonic : TimestampSource::CuptiDefault);
  std::memcpy(process.host, host, sizeof(process.host));
  batch.add(RecordType::Process, process, command_line());
  batch.add(RecordType::Calibration, calibrate(CalibrationPoint::Start));
  s.file.append(batch);
  return clock;
}

// Ends the file when nothing can be traced in this process: `batch` (what was noted so far),
// why, and the end record (the file is complete: nothing was lost). Returns 1, as the
// injection entry points must.
int give_up(State& s, SidecarBatch& batch, const std::string& why) {
  batch.note(why + "; nothing is traced in this process (CUPTI " +
             std::to_string(CUPTI_API_VERSION) +
             " needs the driver of CUDA 13 or newer, and no other CUPTI client such as nsys, "
             "ncu or torch.profiler in the process)");
  const EndRecord end{gpuscope::mono_now_ns()};
  batch.add(RecordType::End, end);
  s.file.append(batch);
  s.file.close();
  s.finished = true;
  return 1;
}

// Enables kernel records, then memcpy and memset records when CUPTI took them; returns CUPTI's
// answer for the kernels.
CUptiResult enable_kernel_records(SidecarBatch& batch) {
  CUptiResult kernels = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  // KERNEL serialises kernels but is what some configurations (e.g. old vGPUs) offer.
  if (kernels != CUPTI_SUCCESS) kernels = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL);
  if (kernels == CUPTI_SUCCESS) {
    enable(CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", batch);
    enable(CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2", batch);
    enable(CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", batch);
  }
  return kernels;
}

// Enables NVTX ranges (push/pop, start/end) and marks, then their categories (MARKER_DATA)
// when CUPTI took them; returns CUPTI's answer for the markers.
CUptiResult enable_marker_records(SidecarBatch& batch) {
  const CUptiResult markers = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
  if (markers == CUPTI_SUCCESS) enable(CUPTI_ACTIVITY_KIND_MARKER_DATA, "MARKER_DATA", batch);
  return markers;
}

// Enables the records `kinds` asks for, noting in `batch` what CUPTI refused; returns why
// nothing can be traced when a refusal leaves nothing of what was asked for.
std::optional<std::string> enable_requested(const Kinds& kinds, SidecarBatch& batch) {
  bool enabled = false;
  if (kinds.kernels) {
    const CUptiResult kernels = enable_kernel_records(batch);
    if (kernels == CUPTI_SUCCESS) {
      enabled = true;
    } else if (!kinds.nvtx) {
      return "CUPTI could not enable kernel records: " + result_text(kernels);
    } else {
      batch.note("CUPTI could not enable kernel records: " + result_text(kernels) +
                 "; NVTX ranges are still recorded");
    }
  }
  if (kinds.nvtx) {
    const CUptiResult markers = enable_marker_records(batch);
    if (markers != CUPTI_SUCCESS) {
      if (!enabled) return "CUPTI could not enable NVTX (marker) records: " + result_text(markers);
      batch.note("CUPTI could not enable NVTX (marker) records: " + result_text(markers));
    }
  }
  return std::nullopt;
}

// Records each CUDA device's PCI address at its first context's creation (on_resource): finds
// the driver's functions and subscribes to CUPTI's resource callbacks.
void record_pci_addresses(State& s) {
  // The driver is what loaded this library, so its functions are already there (not yet when
  // NVTX loaded it first: the PCI addresses then come from contexts created later, if the
  // driver is loaded by then).
  if (void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
    s.device_get = reinterpret_cast<DeviceGetFn>(dlsym(cuda, "cuDeviceGet"));
    s.pci_bus_id = reinterpret_cast<PciBusIdFn>(dlsym(cuda, "cuDeviceGetPCIBusId"));
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  if (cuptiSubscribe(&subscriber, on_resource, nullptr) == CUPTI_SUCCESS) {
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                        CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  }  // else another tool subscribed (only one may): GPUs are then matched by UUID alone
}

// Opens this process's sidecar file and enables what was asked for; once per process (CUDA's
// cuInit and NVTX's first call may both come here, in either order). Returns 1 as both
// injection entry points must.
int initialize() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.active) return 1;
  const char* dir = std::getenv(kTraceDirVariable);
  if (dir == nullptr || *dir == '\0') {
    std::fprintf(stderr,
                 "gpuscope-cupti: %s is not set, so this process is not traced (run the job "
                 "under 'gpuscope profile --trace-kernels' or '--trace-nvtx')\n",
                 kTraceDirVariable);
    return 1;
  }
  const Kinds kinds = requested_kinds();
  char host[64] = {};
  gethostname(host, sizeof(host) - 1);
  const pid_t pid = getpid();
  if (!open_sidecar(s, dir, host, pid)) return 1;
  const CUptiResult clock = write_process_start(s, host, pid);

  SidecarBatch batch;
  const CUptiResult callbacks = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (callbacks != CUPTI_SUCCESS) {
    return give_up(s, batch, "cuptiActivityRegisterCallbacks failed: " + result_text(callbacks));
  }
  if (const std::optional<std::string> why = enable_requested(kinds, batch)) {
    return give_up(s, batch, *why);
  }
  if (clock != CUPTI_SUCCESS) {
    batch.note("cuptiActivityRegisterTimestampCallback failed (" + result_text(clock) +
               "); timestamps are converted from CUPTI's clock by calibration");
  }
  enable(CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE", batch);
  cuptiActivityFlushPeriod(kFlushPeriodMs);
  record_pci_addresses(s);
  std::atexit(finish);
  s.file.append(batch);
  return 1;
}

using NvtxInitializeFn = int (*)(const void*);

// CUPTI's own NVTX entry point, in the libcupti this library is linked with (the next object
// in this library's lookup scope), else in whichever libcupti the process has loaded.
NvtxInitializeFn cupti_nvtx_entry() {
  if (void* next = dlsym(RTLD_NEXT, "InitializeInjectionNvtx2")) {
    return reinterpret_cast<NvtxInitializeFn>(next);
  }
  for (const char* soname : {"libcupti.so.13", "libcupti.so"}) {
    if (void* cupti = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) {
      if (void* entry = dlsym(cupti, "InitializeInjectionNvtx2")) {
        return reinterpret_cast<NvtxInitializeFn>(entry);
      }
    }
  }
  return nullptr;
}

}  // namespace

// CUDA calls this from cuInit in every process of the job (CUDA_INJECTION64_PATH).
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  return initialize();
}

// NVTX calls this at a process's first NVTX call (NVTX_INJECTION64_PATH names this library):
// the trace is set up if CUDA has not done it yet, and NVTX is handed to CUPTI, whose MARKER
// records then carry the ranges.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* get_export_table) {
  initialize();
  const NvtxInitializeFn cupti = cupti_nvtx_entry();
  if (cupti == nullptr) {
    std::fprintf(stderr,
                 "gpuscope-cupti: CUPTI's InitializeInjectionNvtx2 was not found; NVTX ranges "
                 "are not recorded in this process\n");
    return 0;
  }
  return cupti(get_export_table);
}
