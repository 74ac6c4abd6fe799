// Reads a GPU's identity and limits and probes, once, which metric groups it supports.
#pragma once

#include "core/device_description.hpp"
#include "nvml/session.hpp"

namespace gpuscope::collect {

// Describes `device`; never throws for a single unsupported call (that field stays empty).
DeviceDescription describe_device(const nvml::Device& device);

// Describes the driver and every GPU it enumerates. A GPU that cannot be opened is listed with
// its error rather than failing the whole listing. A GPU says whether MIG mode is on
// (mig_enabled); after every GPU (so GPU i stays at devices[i]) come the MIG devices of the GPUs
// in MIG mode, each with its row index (core/mig.hpp) and its MIG identity (docs/mig.md).
SystemDescription describe_system(const nvml::Session& session);
// The compute slices of a whole GPU in MIG mode: the most MIG devices it can hold (7 on an A100,
// H100 or H200, one per 1g slice); nullopt with MIG off.
std::optional<unsigned> parent_compute_slices(const nvml::Device& gpu);
// The handle of the MIG device `d` describes, found again by its UUID on its parent GPU;
// nullopt when it is gone (or `d` is no MIG device).
std::optional<nvml::Device> find_mig_device(const nvml::Session& session,
                                            const DeviceDescription& d);
// Reads each GPU's health counters now (ECC, remapped rows, PCIe replays...; docs/health.md).
void describe_health(std::vector<DeviceDescription>& devices, const nvml::Session& session);

}  // namespace gpuscope::collect
