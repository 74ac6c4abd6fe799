// The node's GPUs of both vendors, opened for sampling by profile, sweep, monitor and serve:
// NVIDIA's through NVML (with their MIG devices), AMD's through AMD SMI or ROCm SMI, described in
// one list in which AMD GPUs follow the NVIDIA GPUs (docs/amd.md). A node with GPUs of one
// vendor only needs only that vendor's library.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amd/session.hpp"
#include "collect/backend.hpp"
#include "collect/saturation.hpp"
#include "core/device_description.hpp"
#include "nvml/session.hpp"

namespace gpuscope::collect {

struct NodeGpus {
  std::shared_ptr<const nvml::Library> nvml_library;  // null: no NVIDIA library here
  std::unique_ptr<nvml::Session> nvml;                // null: no NVIDIA library here
  std::unique_ptr<amd::Session> amd;                  // null: no AMD GPU here
  // devices: the NVIDIA GPUs (NVML indices), then the AMD GPUs (indices from the NVIDIA GPUs'
  // count on), with the MIG devices' rows (1000 and up) among the NVIDIA ones.
  SystemDescription system;
  // What the user should know: a vendor's library present that failed while the other's
  // GPUs are sampled.
  std::vector<std::string> notes;
};

// Opens both vendors' libraries (--simulate: both simulated over the scenario). Throws Error
// when neither lists a GPU and one of them failed for a reason worth saying (NVML's error when
// neither vendor's library is here); a node whose NVML lists no GPU and has no AMD GPU returns
// with no device, as before.
NodeGpus open_node_gpus(const BackendOptions& options);

// The readers of the devices `indices` (descriptions parallel to it): open_readers over `nvml`
// for the NVIDIA ones, an AmdReader over `amd` for each AMD GPU, in the order of `indices`. A
// session may be null when no device of its vendor is among them.
OpenedReaders open_node_readers(const nvml::Session* nvml, const amd::Session* amd,
                                const std::vector<unsigned>& indices,
                                std::vector<DeviceDescription>& descriptions,
                                const BackendOptions& options, std::chrono::nanoseconds interval);

// One look at an AMD GPU's processes, for the process watch (app/profile/process_watch.hpp), which
// may not know amd/: the pids and the VRAM each holds; nullopt when the library could not say this
// time (a GPU resetting) or cannot at all (ROCm SMI).
struct ListedProcess {
  unsigned pid = 0;
  std::optional<std::uint64_t> used_memory_bytes;
  // An AMD GPU's process: its share of the graphics engine's time since the lister's previous
  // look (percent; the difference of AMD SMI's engine_usage.gfx over the time between); none at
  // a process's first look.
  std::optional<double> gfx_percent;
};
using ProcessLister = std::function<std::optional<std::vector<ListedProcess>>()>;

// The lister of AMD GPU `vendor_index` of `session` (which outlives it). It keeps each process's
// graphics time from one look to the next, for gfx_percent.
ProcessLister amd_process_lister(const amd::Session& session, unsigned vendor_index);

}  // namespace gpuscope::collect
