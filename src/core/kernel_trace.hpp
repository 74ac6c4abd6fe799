// What `gpuscope profile --trace-kernels` records of the job's GPU work (docs/kernels.md): the
// traced CUDA processes, their CUDA devices, and kernel, memcpy and memset activity, with times
// on gpuscope's clocks. Plain data shared by trace/ (producer), store/ (persistence) and the
// readers (kernels, report, export).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope {

// One traced CUDA process of a run (one sidecar file).
struct TraceProcess {
  std::int64_t process = 0;  // 1, 2, ... within the run
  std::int64_t pid = 0;
  std::string host;
  std::string command;             // the process's command line, arguments separated by spaces
  std::int64_t cupti_version = 0;  // CUPTI_API_VERSION the library was built with
  std::string clock;               // "monotonic" (CUPTI asked for CLOCK_MONOTONIC) or "calibrated"
  std::int64_t calibrations = 0;
  std::int64_t kernels = 0;
  std::int64_t memory_ops = 0;
  std::int64_t dropped_records = 0;  // records CUPTI reported dropped (buffers full)
  bool complete = false;             // the process flushed and ended normally
  std::vector<std::string> problems;
};

// A CUDA device as one traced process saw it, and the sampled GPU it is.
struct TraceDevice {
  std::int64_t process = 0;
  std::uint32_t cuda_device = 0;  // the CUDA ordinal inside that process (CUDA_VISIBLE_DEVICES)
  std::optional<unsigned> device_index;   // NVML index of the sampled GPU; none: not sampled
  std::optional<std::string> uuid;        // "GPU-xxxxxxxx-..." as NVML writes it
  std::optional<std::string> pci_bus_id;  // "00000000:18:00.0" as NVML writes it
  std::string name;
};

// Times of an activity on gpuscope's two clocks (core/clock.hpp), ns.
struct TraceTimes {
  std::int64_t start_mono_ns = 0;
  std::int64_t end_mono_ns = 0;
  std::int64_t start_wall_ns = 0;
  std::int64_t end_wall_ns = 0;
  std::int64_t duration_ns() const { return end_mono_ns - start_mono_ns; }
};

// Where an activity ran.
struct TracePlace {
  std::optional<unsigned> device_index;  // NVML index; none when the GPU was not sampled
  std::int64_t process = 0;
  std::uint32_t cuda_device = 0;
  std::uint32_t context_id = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t correlation_id = 0;
};

struct TraceKernel {
  TracePlace place;
  TraceTimes times;
  std::int64_t name_id = 0;  // kernel_names of the run
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::int32_t registers_per_thread = 0;
  std::int32_t static_shared_bytes = 0;
  std::int32_t dynamic_shared_bytes = 0;
};

// A memcpy or a memset.
struct TraceMemoryOp {
  TracePlace place;
  TraceTimes times;
  bool memset = false;
  std::int32_t copy_kind = 0;  // CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP ...)
  std::int32_t src_kind = 0;   // CUpti_ActivityMemoryKind of source and destination
  std::int32_t dst_kind = 0;
  std::int64_t bytes = 0;
  std::int64_t value = 0;  // memset: the value set
};

// A kernel name of a run: as CUDA reports it (mangled for C++) and for people.
struct TraceKernelName {
  std::int64_t name_id = 0;
  std::string name;
  std::string demangled;
  std::string short_name;  // nsys's shortName: the function name without scope, templates, args
};

}  // namespace gpuscope
