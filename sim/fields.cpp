#include "sim/fields.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuscope::sim {
namespace {

bool listed(const std::vector<unsigned>& ids, unsigned id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

bool is_power_field(unsigned id) {
  return id >= nvml::kFieldPowerAverage && id <= nvml::kFieldPowerRequestedLimit &&
         id != nvml::kFieldEnergy;
}

void set_uint(nvmlFieldValue_t& value, double number) {
  value.valueType = nvml::kValueTypeUnsignedInt;
  value.value.uiVal = static_cast<unsigned int>(std::lround(std::max(number, 0.0)));
}

void set_ull(nvmlFieldValue_t& value, unsigned long long number) {
  value.valueType = nvml::kValueTypeUnsignedLongLong;
  value.value.ullVal = number;
}

}  // namespace

void fill_field_value(const SimDevice& device, const CallContext& context,
                      nvmlFieldValue_t& value) {
  const GpuModel& model = device.model;
  const GpuSpec& spec = model.config().spec;
  value.timestamp = context.realtime_ns / 1000;
  value.latencyUsec = context.latency_us + static_cast<unsigned>(context.cost_ns / 1000);
  value.value.ullVal = 0;
  value.nvmlReturn = nvml::kErrorNotSupported;
  value.valueType = nvml::kValueTypeUnsignedInt;
  const unsigned id = value.fieldId;
  if (listed(spec.unsupported_fields, id) ||
      listed(model.config().faults.not_supported_fields, id)) {
    return;
  }
  // Power fields have scopes: GPU everywhere, MODULE (GPU + Grace CPU + LPDDR) on Grace Hopper.
  double scope_extra_w = 0;
  if (is_power_field(id) && value.scopeId != nvml::kPowerScopeGpu) {
    if (value.scopeId != nvml::kPowerScopeModule || !spec.module_power) return;
    if (id == nvml::kFieldPowerAverage || id == nvml::kFieldPowerInstant) {
      scope_extra_w = spec.module_extra_w;
    }
  }
  const double extra_mw = scope_extra_w * 1000.0;
  switch (id) {
    case nvml::kFieldMemoryTemp:
      set_uint(value, model.bucket().temperature_c + spec.thermal.memory_offset_c);
      break;
    case nvml::kFieldTotalEnergyConsumption:
    case nvml::kFieldEnergy:
      set_ull(value, model.energy_mj());
      break;
    case nvml::kFieldPowerAverage:
      set_uint(value, model.power_average_mw() + extra_mw);
      break;
    case nvml::kFieldPowerInstant:
      set_uint(value, model.bucket().power_mw + extra_mw);
      break;
    case nvml::kFieldPowerMinLimit:
      set_uint(value, spec.power.min_w * 1000.0);
      break;
    case nvml::kFieldPowerMaxLimit:
      set_uint(value, spec.power.max_w * 1000.0);
      break;
    case nvml::kFieldPowerDefaultLimit:
      set_uint(value, spec.power.default_w * 1000.0);
      break;
    case nvml::kFieldPowerCurrentLimit:
    case nvml::kFieldPowerRequestedLimit:
      set_uint(value, model.power_limit_mw());
      break;
    case nvml::kFieldPcieCountTxBytes:
      set_ull(value, model.pcie_bytes(Activity::PcieTx));
      break;
    case nvml::kFieldPcieCountRxBytes:
      set_ull(value, model.pcie_bytes(Activity::PcieRx));
      break;
    default:
      fill_health_field(device, context, value);
      return;  // otherwise not modelled: NOT_SUPPORTED
  }
  value.nvmlReturn = nvml::kSuccess;
}

void charge_fields(const CallContext& context, const nvmlFieldValue_t* values, int count) {
  if (context.costs == nullptr || context.costs->field_ns.empty() || count <= 0) return;
  std::vector<unsigned> ids(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) ids[static_cast<std::size_t>(i)] = values[i].fieldId;
  context.cost_ns = std::max(context.cost_ns, context.costs->of_fields(ids));
}

}  // namespace gpuscope::sim
