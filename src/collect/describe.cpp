#include "collect/describe.hpp"

#include <fmt/format.h>

#include <array>

#include "collect/health_reader.hpp"
#include "nvml/gpm.hpp"

namespace gpuscope::collect {
namespace {

template <typename T>
std::optional<T> ok(const nvml::Expected<T>& value) {
  return value ? std::optional<T>(*value) : std::nullopt;
}

std::optional<double> watts(const nvml::Expected<unsigned>& milliwatts) {
  return milliwatts ? std::optional<double>(*milliwatts / 1000.0) : std::nullopt;
}

Capability capability(const nvml::Device& device, std::string key, std::string label,
                      const nvml::Status& status) {
  Capability c{std::move(key), std::move(label), status.has_value(), {}};
  if (!status) c.detail = device.library().error_string(status.error().code);
  return c;
}

template <typename T>
nvml::Status as_status(const nvml::Expected<T>& value) {
  if (!value) return tl::unexpected(value.error());
  return {};
}

// Field-value groups: one call, then each field's own return code.
struct FieldProbe {
  const char* key;
  const char* label;
  unsigned field_id;
  unsigned scope;
};
constexpr std::array kFieldProbes = {
    FieldProbe{"instant_power", "instant power (field 186)", nvml::kFieldPowerInstant,
               nvml::kPowerScopeGpu},
    FieldProbe{"average_power", "1 s average power (field 185)", nvml::kFieldPowerAverage,
               nvml::kPowerScopeGpu},
    FieldProbe{"module_power", "module power (Grace Hopper)", nvml::kFieldPowerInstant,
               nvml::kPowerScopeModule},
    FieldProbe{"memory_temperature", "memory temperature (field 82)", nvml::kFieldMemoryTemp, 0},
    FieldProbe{"pcie_counters", "PCIe byte counters (fields 197/198)", nvml::kFieldPcieCountTxBytes,
               0},
};

void probe_fields(const nvml::Device& device, std::vector<Capability>& out) {
  std::array<nvmlFieldValue_t, kFieldProbes.size()> values{};
  for (std::size_t i = 0; i < kFieldProbes.size(); ++i) {
    values[i].fieldId = kFieldProbes[i].field_id;
    values[i].scopeId = kFieldProbes[i].scope;
  }
  const nvml::Status status = device.field_values(values);
  for (std::size_t i = 0; i < kFieldProbes.size(); ++i) {
    nvml::Status field_status = status;
    if (status && values[i].nvmlReturn != nvml::kSuccess) {
      field_status =
          tl::unexpected(nvml::Failure{values[i].nvmlReturn, "nvmlDeviceGetFieldValues"});
    }
    out.push_back(capability(device, kFieldProbes[i].key, kFieldProbes[i].label, field_status));
  }
}

// GPM counts as supported only when the device says so and a sample can really be taken.
nvml::Status probe_gpm(const nvml::Device& device) {
  auto supported = device.gpm_supported();
  if (!supported) return tl::unexpected(supported.error());
  if (!*supported) {
    return tl::unexpected(nvml::Failure{nvml::kErrorNotSupported, "nvmlGpmQueryDeviceSupport"});
  }
  auto sample = nvml::GpmSample::allocate(device.shared_library());
  if (!sample) return tl::unexpected(sample.error());
  return sample->take(device);
}

}  // namespace

DeviceDescription describe_device(const nvml::Device& device) {
  DeviceDescription d;
  d.index = device.index();
  const auto name = device.name();
  if (!name && name.error().code == nvml::kErrorGpuIsLost) {
    // Every further call would fail the same way; one clear line beats a column of dashes.
    d.error = device.library().describe(name.error());
    return d;
  }
  d.name = ok(name);
  d.uuid = ok(device.uuid());
  if (auto pci = device.pci_info()) d.pci_bus_id = pci->bus_id;
  if (auto arch = device.architecture()) d.architecture = nvml::architecture_name(*arch);
  if (auto cc = device.compute_capability()) {
    d.compute_capability = fmt::format("{}.{}", cc->major, cc->minor);
  }
  const auto memory = device.memory();
  if (memory) d.memory_total_bytes = memory->total_bytes;
  d.power_limit_w = watts(device.power_limit_mw());
  d.enforced_power_limit_w = watts(device.enforced_power_limit_mw());
  d.default_power_limit_w = watts(device.default_power_limit_mw());
  const auto constraints = device.power_limit_constraints_mw();
  if (constraints) {
    d.min_power_limit_w = constraints->min_mw / 1000.0;
    d.max_power_limit_w = constraints->max_mw / 1000.0;
  }
  d.max_sm_clock_mhz = ok(device.max_clock_mhz(nvml::ClockType::Sm));
  d.max_memory_clock_mhz = ok(device.max_clock_mhz(nvml::ClockType::Memory));
  d.max_graphics_clock_mhz = ok(device.max_clock_mhz(nvml::ClockType::Graphics));

  auto& caps = d.capabilities;
  caps.push_back(capability(device, "gpm", "GPM saturation metrics (SM active, tensor, DRAM, ...)",
                            probe_gpm(device)));
  caps.push_back(
      capability(device, "energy_counter", "energy counter", as_status(device.total_energy_mj())));
  caps.push_back(
      capability(device, "power_usage", "power usage", as_status(device.power_usage_mw())));
  probe_fields(device, caps);
  caps.push_back(capability(device, "power_limits", "power limits", as_status(constraints)));
  caps.push_back(
      capability(device, "temperature", "GPU temperature", as_status(device.temperature_c())));
  caps.push_back(
      capability(device, "clocks", "clocks", as_status(device.clock_mhz(nvml::ClockType::Sm))));
  caps.push_back(capability(device, "utilization", "utilization", as_status(device.utilization())));
  caps.push_back(capability(device, "clock_event_reasons", "clock event (throttle) reasons",
                            as_status(device.clock_event_reasons())));
  caps.push_back(capability(device, "memory", "memory usage", as_status(memory)));
  caps.push_back(capability(device, "processes", "running compute processes",
                            as_status(device.compute_processes())));
  return d;
}

SystemDescription describe_system(const nvml::Session& session) {
  SystemDescription system;
  system.library_path = session.library()->path();
  system.driver_version = session.driver_version();
  system.nvml_version = session.nvml_version();
  system.cuda_driver_version = session.cuda_driver_version();
  const unsigned count = session.device_count();
  for (unsigned i = 0; i < count; ++i) {
    auto device = session.try_device(i);
    if (!device) {
      DeviceDescription failed;
      failed.index = i;
      failed.error = session.library()->describe(device.error());
      system.devices.push_back(std::move(failed));
      continue;
    }
    system.devices.push_back(describe_device(*device));
  }
  return system;
}

void describe_health(std::vector<DeviceDescription>& devices, const nvml::Session& session) {
  for (auto& d : devices) {
    if (d.error) continue;
    auto device = session.try_device(d.index);
    if (!device) continue;
    HealthReader reader(std::move(*device));
    HealthRow row;
    if (reader.read(row) && row.present.any()) d.health = row;
  }
}

}  // namespace gpuscope::collect
