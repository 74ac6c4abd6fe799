#include "app/inputs/report_kernels.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "store/kernel_tables.hpp"

namespace gpuscope::app {

std::optional<report::KernelLanes> load_kernel_lanes(const analyze::Analysis& a) {
  // The report's GPU of each (run, NVML index); runs are grouped by the file they are in.
  std::map<std::pair<std::size_t, unsigned>, std::size_t> gpu_of;
  for (std::size_t g = 0; g < a.gpus.size(); ++g) {
    gpu_of[{static_cast<std::size_t>(a.gpus[g].key.run_id), a.gpus[g].key.device_index}] = g;
  }
  std::map<std::string, std::vector<std::size_t>> runs_of_file;
  for (std::size_t r = 0; r < a.runs.size(); ++r) runs_of_file[a.runs[r].source].push_back(r);

  std::vector<std::pair<store::KernelTraceReader, std::vector<std::size_t>>> files;
  std::size_t total = 0;
  for (const auto& [file, runs] : runs_of_file) {
    store::KernelTraceReader reader = store::KernelTraceReader::open(file);
    if (!reader.has_trace_tables()) continue;
    std::size_t kernels = 0;
    for (std::size_t r : runs) {
      kernels += static_cast<std::size_t>(reader.count_kernels(a.runs[r].run_id));
    }
    // Only files with kernels stay open: a folder of thousands of rank files, most without a
    // trace, must not hold a connection (and its schema) per file.
    if (kernels == 0) continue;
    total += kernels;
    files.emplace_back(std::move(reader), runs);
  }
  if (total == 0) return std::nullopt;

  report::KernelLanes lanes(total, a.duration_s, a.gpus.size());
  for (const auto& [reader, runs] : files) {
    for (std::size_t r : runs) {
      const std::int64_t run_id = a.runs[r].run_id;
      std::map<std::int64_t, std::size_t> name_of;
      for (const TraceKernelName& n : reader.names(run_id)) {
        name_of[n.name_id] = lanes.name(n.demangled);
      }
      reader.for_each_kernel(run_id, store::TraceOrder::ByDeviceStream, [&](const TraceKernel& k) {
        const auto gpu =
            k.place.device_index ? gpu_of.find({r, *k.place.device_index}) : gpu_of.end();
        if (gpu == gpu_of.end()) {
          lanes.add_unsampled(1);
          return;
        }
        const auto name = name_of.find(k.name_id);
        lanes.add(gpu->second, k.times.start_wall_ns - a.t0_wall_ns, k.times.duration_ns(),
                  name != name_of.end() ? name->second : lanes.name("<unnamed kernel>"));
      });
    }
  }
  return lanes;
}

}  // namespace gpuscope::app
