// The two implementations of amd::Device: one over AMD SMI's processor handles, one over ROCm
// SMI's device indices. Internal to amd/.
#pragma once

#include <memory>

#include "amd/session.hpp"

namespace gpuscope::amd {

std::unique_ptr<Device> make_amd_smi_device(std::shared_ptr<const AmdSmiLibrary> library,
                                            amdsmi_processor_handle handle);
std::unique_ptr<Device> make_rocm_smi_device(std::shared_ptr<const RocmSmiLibrary> library,
                                             std::uint32_t index);

}  // namespace gpuscope::amd
