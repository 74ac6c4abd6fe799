// MIG (Multi-Instance GPU): what makes a MIG device a device of its own in gpuscope. A GPU in MIG
// mode is split into GPU instances (its own SMs and memory slices); each holds compute instances,
// and a compute instance is what CUDA sees as a device ("MIG-<uuid>"). gpuscope measures one MIG
// device per GPU instance (one compute instance spanning it, the common layout) as a device with
// its own row index, linked to the GPU it is part of (docs/mig.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpuscope {

// Who a MIG device is. Its name, UUID and memory are the DeviceDescription's own fields.
struct MigIdentity {
  unsigned parent_index = 0;  // NVML index of the GPU it is part of
  unsigned mig_index = 0;     // NVML's MIG device index on that GPU (may change between runs)
  unsigned gpu_instance_id = 0;
  std::optional<unsigned> compute_instance_id;
  std::optional<std::string> profile;       // "1g.18gb", from the name NVML gives it
  std::optional<unsigned> gpu_slices;       // the GPU instance's compute slices (of 7 or 8)
  std::optional<unsigned> compute_slices;   // the compute instance's slices
  std::optional<unsigned> multiprocessors;  // SMs
  std::optional<unsigned> parent_slices;    // compute slices of the whole GPU (7 on A100/H100)
};

// The row indexes of a run's devices, one scheme for every source (docs/database.md):
//   0-999        a GPU, by its index (NVML's, a log's);
//   1000-9999    a MIG device: 1000 + 100 × parent + GPU instance id ("GPU 0, GI 3" is 1003,
//                "GPU 7, GI 13" is 1713), stable while the instance lives; parents below 90 and
//                instance ids below 100 (NVML's are below 15);
//   10000-10999  a MIG GPU instance known only by DCGM's entity id (a dcgmi dmon log's
//                "GPU-I 7"), whose GPU and GPU instance id the source does not give: a device of
//                its own, 10000 + entity id, never read as some GPU's instance.
inline constexpr unsigned kMigIndexBase = 1000;
inline constexpr unsigned kDcgmInstanceIndexBase = 10000;
inline constexpr unsigned kDcgmInstanceIndexEnd = 11000;
constexpr unsigned mig_device_index(unsigned parent_index, unsigned gpu_instance_id) {
  return kMigIndexBase + 100 * parent_index + gpu_instance_id;
}
// Whether a row index is a MIG device's, linked to its GPU (mig_device_index).
constexpr bool is_mig_device_index(unsigned device_index) {
  return device_index >= kMigIndexBase && device_index < kDcgmInstanceIndexBase;
}
// The row index of a MIG GPU instance known only by its DCGM entity id (below 1000).
constexpr unsigned dcgm_instance_device_index(unsigned entity_id) {
  return kDcgmInstanceIndexBase + entity_id;
}
constexpr bool is_dcgm_instance_device_index(unsigned device_index) {
  return device_index >= kDcgmInstanceIndexBase && device_index < kDcgmInstanceIndexEnd;
}

// "GPU 3" for a GPU's row index, "GPU 0 GI 7" for a MIG device's (without its profile), "DCGM
// GPU instance 7" for one known only by DCGM's entity id.
std::string device_index_label(unsigned device_index);

// "1g.18gb" from NVML's MIG device name ("NVIDIA H100 80GB HBM3 MIG 1g.10gb"); nullopt when the
// name holds no profile.
std::optional<std::string> mig_profile_from_name(const std::string& name);

// "GPU 0 GI 3 (1g.18gb)": how people are shown a MIG device.
std::string mig_label(const MigIdentity& mig);

}  // namespace gpuscope
