// Words for NVML return codes: a fallback when nvmlErrorString is unhelpful, and what to do.
#pragma once

#include <string_view>

#include "nvml/abi.hpp"

namespace gpuscope::nvml {

// The driver's usual text for `code`, for libraries whose nvmlErrorString returns nothing.
std::string_view fallback_error_text(nvmlReturn_t code);

// What the user can do about `code` (empty when there is nothing useful to say).
std::string_view hint_for(nvmlReturn_t code, bool simulated);

}  // namespace gpuscope::nvml
