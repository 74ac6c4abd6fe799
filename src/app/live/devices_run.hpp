// gpuscope devices: the NVIDIA GPUs through NVML and the AMD GPUs through AMD SMI or ROCm SMI,
// side by side (docs/cli.md, docs/amd.md).
#pragma once

#include <string>

#include "collect/backend.hpp"
#include "core/device_description.hpp"

namespace gpuscope::app {

struct DevicesOptions {
  collect::BackendOptions backend;
  bool json = false;
  std::string vendor = "all";  // all, nvidia or amd
};

// The GPUs of the vendors asked for. With "all", a vendor with no library or no GPU is left out
// silently; when neither has a GPU, the error says why (NVML's, unless the AMD library found AMD
// GPUs it could not use). With one vendor, that vendor's error. Throws Error.
SystemDescription describe_devices(const DevicesOptions& options);

// Prints describe_devices as text or JSON; the exit code.
int run_devices(const DevicesOptions& options);

}  // namespace gpuscope::app
