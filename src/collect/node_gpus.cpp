#include "collect/node_gpus.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>

#include "collect/amd_describe.hpp"
#include "collect/amd_reader.hpp"
#include "collect/describe.hpp"
#include "collect/gpu_selection.hpp"
#include "core/clock.hpp"

namespace gpuscope::collect {
namespace {

// Opens NVML and describes its GPUs into `gpus`; the error when it cannot.
std::optional<Error> open_nvidia(const BackendOptions& options, NodeGpus& gpus) {
  try {
    gpus.nvml_library = open_backend(options);
    gpus.nvml = std::make_unique<nvml::Session>(gpus.nvml_library);
    gpus.system = describe_system(*gpus.nvml);
    if (gpus.nvml_library->simulated()) gpus.system.scenario = options.simulate;
    return std::nullopt;
  } catch (const Error& error) {
    gpus.nvml.reset();
    gpus.nvml_library.reset();
    return error;
  }
}

// Opens AMD SMI or ROCm SMI and appends its GPUs to `gpus`; the error when it cannot.
std::optional<Error> open_amd_gpus(const BackendOptions& options, NodeGpus& gpus) {
  try {
    gpus.amd = open_amd(options);
    // After the NVIDIA GPUs, before the MIG devices: the GPUs come first (gpu_selection.hpp).
    const std::size_t first = gpu_count(gpus.system.devices);
    AmdSystemDescription amd = describe_amd(*gpus.amd, static_cast<unsigned>(first));
    const auto at = gpus.system.devices.begin() + static_cast<std::ptrdiff_t>(first);
    gpus.system.devices.insert(at, amd.devices.begin(), amd.devices.end());
    gpus.system.amd = std::move(amd);
    if (!options.simulate.empty()) gpus.system.scenario = options.simulate;
    return std::nullopt;
  } catch (const Error& error) {
    gpus.amd.reset();
    return error;
  }
}

}  // namespace

NodeGpus open_node_gpus(const BackendOptions& options) {
  NodeGpus gpus;
  gpus.system.nvidia = false;
  const std::optional<Error> nvidia_error = open_nvidia(options, gpus);
  const bool nvidia_gpus = !nvidia_error && !gpus.system.devices.empty();
  // A library named for NVIDIA is what the user wants to use: its failure is the answer.
  if (nvidia_error && !options.nvml_library.empty()) throw *nvidia_error;
  const std::optional<Error> amd_error = open_amd_gpus(options, gpus);
  if (gpus.amd) {
    gpus.system.nvidia = nvidia_gpus;
    if (nvidia_error && !nvml::is_no_driver(*nvidia_error)) {
      gpus.notes.push_back(fmt::format("NVIDIA GPUs not sampled: {}", nvidia_error->what()));
    }
    return gpus;
  }
  if (nvidia_gpus) {
    if (!amd_absent(*amd_error)) {
      gpus.notes.push_back(fmt::format("AMD GPUs not sampled: {}", amd_error->what()));
    }
    return gpus;
  }
  // No GPU of either vendor: an AMD problem other than "none here" is the one worth showing.
  if (!amd_absent(*amd_error)) throw *amd_error;
  if (nvidia_error) throw *nvidia_error;
  gpus.system.nvidia = true;
  return gpus;  // NVML without GPUs: the caller says there is nothing to sample
}

OpenedReaders open_node_readers(const nvml::Session* nvml, const amd::Session* amd,
                                const std::vector<unsigned>& indices,
                                std::vector<DeviceDescription>& descriptions,
                                const BackendOptions& options, std::chrono::nanoseconds interval) {
  std::vector<unsigned> nvidia_indices;
  std::vector<DeviceDescription> nvidia;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (descriptions[k].vendor == "amd") continue;
    nvidia_indices.push_back(indices[k]);
    nvidia.push_back(descriptions[k]);
  }
  OpenedReaders opened;
  if (!nvidia.empty()) {
    if (nvml == nullptr) throw Error("no NVML session for the NVIDIA GPUs to sample");
    opened = open_readers(*nvml, nvidia_indices, nvidia, options, interval);
  }
  // The NVIDIA readers in their order (a MIG device gone since it was described has none), the
  // AMD readers made in place: the readers keep the order of `indices`.
  GpuReaders readers;
  std::size_t next_nvidia = 0;
  std::size_t next_description = 0;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    DeviceDescription& d = descriptions[k];
    if (d.vendor != "amd") {
      d = nvidia[next_description++];  // with its saturation source
      if (next_nvidia < opened.readers.size() && opened.readers[next_nvidia]->index() == d.index) {
        readers.push_back(std::move(opened.readers[next_nvidia++]));
      }
      continue;
    }
    if (amd == nullptr || !d.vendor_index) throw Error("no AMD session for the AMD GPUs to sample");
    const amd::Device& device = *amd->devices().at(*d.vendor_index);
    readers.push_back(
        std::make_unique<AmdReader>(device, d.index, d.max_power_limit_w, opened.notes));
  }
  opened.readers = std::move(readers);
  return opened;
}

ProcessLister amd_process_lister(const amd::Session& session, unsigned vendor_index) {
  const amd::Device* device = session.devices().at(vendor_index).get();
  struct Seen {
    std::uint64_t gfx_ns = 0;
    std::int64_t mono_ns = 0;
  };
  auto last = std::make_shared<std::map<unsigned, Seen>>();
  return [device, last]() -> std::optional<std::vector<ListedProcess>> {
    // The counters were read somewhere inside the call: its midpoint is the best time for them
    // (a thread held up inside it, on a loaded node, then skews a share by half the delay).
    const std::int64_t asked = mono_now_ns();
    const auto processes = device->processes();
    if (!processes) return std::nullopt;
    const std::int64_t answered = mono_now_ns();
    const std::int64_t now = asked + (answered - asked) / 2;
    std::map<unsigned, Seen> seen;
    std::vector<ListedProcess> out;
    for (const auto& p : *processes) {
      ListedProcess listed{p.pid, p.memory_bytes, std::nullopt};
      if (p.gfx_ns) {
        const auto before = last->find(p.pid);
        if (before != last->end() && now > before->second.mono_ns &&
            *p.gfx_ns >= before->second.gfx_ns) {
          listed.gfx_percent = static_cast<double>(*p.gfx_ns - before->second.gfx_ns) * 100.0 /
                               static_cast<double>(now - before->second.mono_ns);
        }
        seen[p.pid] = {*p.gfx_ns, now};
      }
      out.push_back(listed);
    }
    *last = std::move(seen);  // processes gone are forgotten
    return out;
  };
}

}  // namespace gpuscope::collect
