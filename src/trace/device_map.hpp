// Which sampled GPU a traced process's CUDA device is. CUDA numbers devices inside each process
// (CUDA_VISIBLE_DEVICES renumbers them), NVML numbers the node's GPUs; both name a GPU by its
// UUID and its PCI address, so those are what is matched, never the ordinals.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_description.hpp"
#include "trace/sidecar_reader.hpp"

namespace gpuscope::trace {

// A UUID as NVML writes it: "GPU-" and 32 hex digits in groups of 8-4-4-4-12.
std::string format_gpu_uuid(const std::array<std::uint8_t, 16>& bytes);

// A PCI bus id as NVML ("00000000:18:00.0") or CUDA ("0000:18:00.0") writes it; the function is
// ignored (a GPU is function 0). nullopt when it is not one.
std::optional<PciAddress> parse_pci_bus_id(std::string_view text);
// NVML's form: "%08X:%02X:%02X.0".
std::string format_pci_bus_id(const PciAddress& address);

// The NVML index of the GPU in `devices` that `device` is: the same UUID (case-insensitive),
// else the same PCI address; nullopt when neither matches (a GPU gpuscope did not sample).
std::optional<unsigned> match_device(const SidecarDevice& device,
                                     const std::vector<DeviceDescription>& devices);

}  // namespace gpuscope::trace
