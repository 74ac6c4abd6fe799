// nvmlDeviceGetFieldValues for one field.
#pragma once

#include "nvml/abi.hpp"
#include "sim/driver.hpp"

namespace gpuscope::sim {

// Fills value (fieldId and scopeId set by the caller). Fields the GPU does not report get
// nvmlReturn NOT_SUPPORTED; the call as a whole still succeeds, as with the real driver.
void fill_field_value(const SimDevice& device, const CallContext& context, nvmlFieldValue_t& value);

// Sets the request's cost by the scenario's driver_costs: its slowest field (sim/costs.hpp).
void charge_fields(const CallContext& context, const nvmlFieldValue_t* values, int count);

// The health fields (sim/health_fields.cpp): false if value.fieldId is not one of them, else
// true with value answered (nvmlReturn SUCCESS, or left NOT_SUPPORTED where the GPU lacks it).
bool fill_health_field(const SimDevice& device, const CallContext& context,
                       nvmlFieldValue_t& value);

}  // namespace gpuscope::sim
