// Helpers shared by the api_*.cpp files.
#pragma once

#include <cstring>
#include <string_view>

#include "nvml/abi.hpp"

namespace gpuscope::sim {

// Copies text with its terminator into buffer, or says why not, as NVML's string getters do.
inline nvmlReturn_t copy_string(std::string_view text, char* buffer, unsigned int length) {
  if (buffer == nullptr) return nvml::kErrorInvalidArgument;
  if (length < text.size() + 1) return nvml::kErrorInsufficientSize;
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  return nvml::kSuccess;
}

}  // namespace gpuscope::sim
