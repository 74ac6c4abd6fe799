// The AMD GPUs as gpuscope describes GPUs: the library chosen like the NVIDIA backend (the
// simulated AMD SMI and ROCm SMI with --simulate, else the system's or the environment's), and
// what each GPU is and offers, probed once (docs/amd.md).
#pragma once

#include <memory>

#include "amd/session.hpp"
#include "collect/backend.hpp"
#include "core/device_description.hpp"
#include "core/error.hpp"

namespace gpuscope::collect {

// Opens AMD SMI, else ROCm SMI: with --simulate the simulated ones over the scenario; else
// GPUSCOPE_AMD_SMI_LIBRARY or GPUSCOPE_ROCM_SMI_LIBRARY when set, else the system's. Throws Error
// (amd::Session::open: no library, no AMD GPU, the driver missing, permission denied).
std::unique_ptr<amd::Session> open_amd(const BackendOptions& options);

// The AMD GPUs of `session`: identity, memory, power cap and range, peak graphics clock, and
// which readings each offers (a capability per reading; saturation: none, said so). Their
// indices start at `first_index`: the number of NVIDIA GPUs on the node (docs/amd.md).
AmdSystemDescription describe_amd(const amd::Session& session, unsigned first_index = 0);

// Whether `error` from open_amd only says there is no AMD GPU here (no library, or one that
// lists none): nothing to report on a node without AMD GPUs.
bool amd_absent(const Error& error);

}  // namespace gpuscope::collect
