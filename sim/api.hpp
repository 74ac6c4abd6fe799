// The sim's implementation of each NVML entry point, declared from the one entry-point list so
// the compiler checks that every entry exists here with the list's signature.
#pragma once

#include "nvml/entry_points.hpp"

namespace gpuscope::sim {

#define GPUSCOPE_SIM_DECLARE(id, requirement, params, args, ...) nvmlReturn_t id params;
GPUSCOPE_NVML_ENTRY_POINTS(GPUSCOPE_SIM_DECLARE, GPUSCOPE_SIM_DECLARE, GPUSCOPE_SIM_DECLARE)
#undef GPUSCOPE_SIM_DECLARE

// nvmlErrorString: the real driver's texts.
const char* ErrorString(nvmlReturn_t result);

}  // namespace gpuscope::sim
