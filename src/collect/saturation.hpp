// Where each GPU's saturation metrics come from (docs/sources.md): GPM through NVML on Hopper and
// newer, DCGM's profiling fields where GPM is missing (Volta, Ampere) and DCGM is there, or on
// request. --metrics-source auto|gpm|dcgm chooses; the choice and its reason are said on stderr
// and stored per GPU in the run database.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collect/backend.hpp"
#include "collect/dcgm_feed.hpp"
#include "collect/device_reader.hpp"
#include "core/device_description.hpp"
#include "nvml/session.hpp"

namespace gpuscope::collect {

// The readers of the GPUs `indices`, each with its saturation source chosen and started;
// `descriptions` (parallel to indices) get saturation_source and saturation_detail. `interval` is
// the sampling interval: DCGM watches at it, but never faster than 100 ms. Throws Error when
// --metrics-source dcgm is asked for and DCGM cannot be opened.
struct OpenedReaders {
  GpuReaders readers;
  std::vector<std::string> notes;  // for stderr: which source each GPU got and why
};
OpenedReaders open_readers(const nvml::Session& session, const std::vector<unsigned>& indices,
                           std::vector<DeviceDescription>& descriptions,
                           const BackendOptions& options, std::chrono::nanoseconds interval);

// For `gpuscope devices`: the source each GPU would get, without watching anything; a GPU that
// would take DCGM gets a "dcgm" capability listing the metrics DCGM offers for it.
void describe_saturation(std::vector<DeviceDescription>& devices, const BackendOptions& options,
                         std::vector<std::string>& notes);

// The shortest watch interval gpuscope asks DCGM for (docs/sources.md).
inline constexpr std::chrono::milliseconds kDcgmMinInterval{100};

// "0-3, 6": NVML indices as ranges.
std::string index_ranges(std::vector<unsigned> indices);

}  // namespace gpuscope::collect
