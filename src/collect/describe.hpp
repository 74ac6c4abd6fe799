// Reads a GPU's identity and limits and probes, once, which metric groups it supports.
#pragma once

#include "core/device_description.hpp"
#include "nvml/session.hpp"

namespace gpuscope::collect {

// Describes `device`; never throws for a single unsupported call (that field stays empty).
DeviceDescription describe_device(const nvml::Device& device);

// Describes the driver and every GPU it enumerates. A GPU that cannot be opened is listed with
// its error rather than failing the whole listing.
SystemDescription describe_system(const nvml::Session& session);
// Reads each GPU's health counters now (ECC, remapped rows, PCIe replays...; docs/health.md).
void describe_health(std::vector<DeviceDescription>& devices, const nvml::Session& session);

}  // namespace gpuscope::collect
