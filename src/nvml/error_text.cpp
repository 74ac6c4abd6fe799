#include "nvml/error_text.hpp"

namespace gpuscope::nvml {

std::string_view fallback_error_text(nvmlReturn_t code) {
  switch (code) {
    case kSuccess:
      return "Success";
    case kErrorUninitialized:
      return "Uninitialized";
    case kErrorInvalidArgument:
      return "Invalid Argument";
    case kErrorNotSupported:
      return "Not Supported";
    case kErrorNoPermission:
      return "Insufficient Permissions";
    case kErrorAlreadyInitialized:
      return "Already Initialized";
    case kErrorNotFound:
      return "Not Found";
    case kErrorInsufficientSize:
      return "Insufficient Size";
    case kErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case kErrorTimeout:
      return "Timeout";
    case kErrorLibraryNotFound:
      return "NVML Shared Library Not Found";
    case kErrorFunctionNotFound:
      return "Function Not Found";
    case kErrorGpuIsLost:
      return "GPU is lost";
    case kErrorNoData:
      return "No Data";
    case kErrorArgumentVersionMismatch:
      return "Argument Version Mismatch";
    default:
      return "Unknown Error";
  }
}

std::string_view hint_for(nvmlReturn_t code, bool simulated) {
  switch (code) {
    case kErrorDriverNotLoaded:
      return simulated ? "check the scenario file (gpuscope scenarios lists the shipped ones)"
                       : "load the NVIDIA kernel driver (nvidia-smi should list the GPUs), or use "
                         "--simulate SCENARIO to try gpuscope without a GPU";
    case kErrorNoPermission:
      return "this needs root or the CAP_SYS_ADMIN capability (setting power limits does)";
    case kErrorGpuIsLost:
      return "the GPU fell off the bus; check dmesg for Xid errors and ask an admin to reset it";
    case kErrorFunctionNotFound:
      return "the installed driver is too old for this call; upgrade the NVIDIA driver";
    case kErrorNotSupported:
      return "this GPU or driver does not offer it";
    default:
      return {};
  }
}

}  // namespace gpuscope::nvml
