// nvmlErrorString's texts, as the real libnvidia-ml prints them.
#include <array>
#include <utility>

#include "sim/api.hpp"

namespace gpuscope::sim {
namespace {

// Indexed by nvmlReturn_t; 999 (UNKNOWN) and anything unlisted print "Unknown Error".
constexpr std::array<const char*, 30> kTexts = {
    "Success",
    "Uninitialized",
    "Invalid Argument",
    "Not Supported",
    "Insufficient Permissions",
    "Already Initialized",
    "Not Found",
    "Insufficient Size",
    "Insufficient External Power",
    "Driver Not Loaded",
    "Timeout",
    "Interrupt request issue",
    "NVML Shared Library Not Found",
    "Function Not Found",
    "Corrupted infoROM",
    "GPU is lost",
    "GPU requires restart",
    "The operating system has blocked the request.",
    "RM has detected an NVML/RM version mismatch.",
    "In use by another client",
    "Insufficient Memory",
    "No data",
    "The requested vgpu operation is not available on target device, becasue ECC is enabled",
    "Ran out of critical resources, other than memory",
    "Frequency not supported",
    "Argument version mismatch",
    "Deprecated",
    "Not Ready",
    "GPU Not Found",
    "Invalid State",
};

}  // namespace

const char* ErrorString(nvmlReturn_t result) {
  if (result < 0 || static_cast<std::size_t>(result) >= kTexts.size()) return "Unknown Error";
  return kTexts[static_cast<std::size_t>(result)];
}

}  // namespace gpuscope::sim
