// The two implementations of amd::Device: one over AMD SMI's processor handles, one over ROCm
// SMI's device indices. Internal to amd/.
#pragma once

#include <memory>

#include "amd/session.hpp"

namespace gpuscope::amd {

// The members gpuscope reads of AMD SMI's metrics table: the XGMI counters summed over the links
// (a link whose counter is all ones, a member the table's format lacks, is left out; none left:
// absent) and the ASIC-independent throttle bits (format 1.3 on; all ones: absent).
MetricsTable read_metrics_table(const amdsmi_gpu_metrics_t& table);

std::unique_ptr<Device> make_amd_smi_device(std::shared_ptr<const AmdSmiLibrary> library,
                                            amdsmi_processor_handle handle);
std::unique_ptr<Device> make_rocm_smi_device(std::shared_ptr<const RocmSmiLibrary> library,
                                             std::uint32_t index);

}  // namespace gpuscope::amd
