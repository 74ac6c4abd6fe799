// Power, energy and field-value entry points.
#include <cmath>

#include "sim/api.hpp"
#include "sim/driver.hpp"
#include "sim/fields.hpp"

namespace gpuscope::sim {
namespace {

// The getters of one unsigned milliwatt figure share everything but the figure.
template <class Figure>
nvmlReturn_t get_milliwatts(Entry entry, nvmlDevice_t device, unsigned int* milliwatts,
                            Figure&& figure) {
  return process_driver().device_call(entry, device, [&](SimDevice& d, const CallContext&) {
    if (milliwatts == nullptr) return nvml::kErrorInvalidArgument;
    *milliwatts = figure(d.model);
    return nvml::kSuccess;
  });
}

unsigned int to_mw(double watts) {
  return static_cast<unsigned int>(std::lround(watts * 1000.0));
}

}  // namespace

nvmlReturn_t DeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts) {
  return get_milliwatts(Entry::DeviceGetPowerUsage, device, milliwatts,
                        [](const GpuModel& model) { return model.power_usage_mw(); });
}

nvmlReturn_t DeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* millijoules) {
  return process_driver().device_call(Entry::DeviceGetTotalEnergyConsumption, device,
                                      [&](SimDevice& d, const CallContext&) {
                                        if (millijoules == nullptr)
                                          return nvml::kErrorInvalidArgument;
                                        *millijoules = d.model.energy_mj();
                                        return nvml::kSuccess;
                                      });
}

nvmlReturn_t DeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* milliwatts) {
  return get_milliwatts(Entry::DeviceGetEnforcedPowerLimit, device, milliwatts,
                        [](const GpuModel& model) { return model.power_limit_mw(); });
}

nvmlReturn_t DeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* milliwatts) {
  return get_milliwatts(Entry::DeviceGetPowerManagementLimit, device, milliwatts,
                        [](const GpuModel& model) { return model.power_limit_mw(); });
}

nvmlReturn_t DeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* milliwatts) {
  return get_milliwatts(
      Entry::DeviceGetPowerManagementDefaultLimit, device, milliwatts,
      [](const GpuModel& model) { return to_mw(model.config().spec.power.default_w); });
}

nvmlReturn_t DeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                      unsigned int* min_milliwatts,
                                                      unsigned int* max_milliwatts) {
  return process_driver().device_call(
      Entry::DeviceGetPowerManagementLimitConstraints, device,
      [&](SimDevice& d, const CallContext&) {
        if (min_milliwatts == nullptr || max_milliwatts == nullptr) {
          return nvml::kErrorInvalidArgument;
        }
        *min_milliwatts = to_mw(d.model.config().spec.power.min_w);
        *max_milliwatts = to_mw(d.model.config().spec.power.max_w);
        return nvml::kSuccess;
      });
}

nvmlReturn_t DeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int milliwatts) {
  return process_driver().set_power_limit(device, milliwatts);
}

// Locked SM clocks (docs/scenarios.md, "Locked clocks"): root only, within the GPU's range, kept
// in the state file like the power limit. A scenario withholds them with faults.not_supported.
nvmlReturn_t DeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int min_mhz,
                                      unsigned int max_mhz) {
  return process_driver().set_locked_clocks(Entry::DeviceSetGpuLockedClocks, device,
                                            LockedClocks{min_mhz, max_mhz});
}

nvmlReturn_t DeviceResetGpuLockedClocks(nvmlDevice_t device) {
  return process_driver().set_locked_clocks(Entry::DeviceResetGpuLockedClocks, device,
                                            LockedClocks{});
}

nvmlReturn_t DeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
  return process_driver().device_call(Entry::DeviceGetFieldValues, device,
                                      [&](SimDevice& d, const CallContext& context) {
                                        if (count < 0 || (count > 0 && values == nullptr))
                                          return nvml::kErrorInvalidArgument;
                                        charge_fields(context, values, count);
                                        for (int i = 0; i < count; ++i)
                                          fill_field_value(d, context, values[i]);
                                        return nvml::kSuccess;
                                      });
}

}  // namespace gpuscope::sim
