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

// GPM of one GPU instance, through its parent GPU (nvmlGpmMigSampleGet).
nvml::Status probe_mig_gpm(const nvml::Device& gpu, unsigned gpu_instance_id) {
  auto supported = gpu.gpm_supported();
  if (!supported) return tl::unexpected(supported.error());
  if (!*supported) {
    return tl::unexpected(nvml::Failure{nvml::kErrorNotSupported, "nvmlGpmQueryDeviceSupport"});
  }
  auto sample = nvml::GpmSample::allocate(gpu.shared_library());
  if (!sample) return tl::unexpected(sample.error());
  return sample->take_mig(gpu, gpu_instance_id);
}

}  // namespace

std::optional<unsigned> parent_compute_slices(const nvml::Device& gpu) {
  // NVML tells an unprivileged user no profile table, but the most MIG devices a GPU can hold is
  // one per compute slice (seven 1g instances on an A100, H100, H200 or B200; four on an A30).
  auto count = gpu.max_mig_device_count();
  if (!count || *count == 0) return std::nullopt;
  return *count;
}

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

namespace {

std::optional<bool> mig_enabled(const nvml::Device& gpu) {
  auto mode = gpu.mig_mode();
  if (!mode) return std::nullopt;  // NOT_SUPPORTED: the GPU cannot do MIG
  return mode->current;
}

std::optional<DeviceDescription> describe_mig_device(const nvml::Device& gpu,
                                                     const DeviceDescription& parent,
                                                     const nvml::Device& device) {
  const auto gi = device.gpu_instance_id();
  if (!gi) return std::nullopt;  // a MIG handle NVML gives no GPU instance for
  MigIdentity mig;
  mig.parent_index = parent.index;
  mig.mig_index = device.index();
  mig.gpu_instance_id = *gi;
  mig.compute_instance_id = ok(device.compute_instance_id());
  mig.parent_slices = parent_compute_slices(gpu);
  DeviceDescription d;
  d.index = mig_device_index(parent.index, *gi);
  d.name = ok(device.name());
  d.uuid = ok(device.uuid());
  if (d.name) mig.profile = mig_profile_from_name(*d.name);
  const auto attributes = device.attributes();
  if (attributes) {
    mig.gpu_slices = attributes->gpu_instance_slice_count;
    mig.compute_slices = attributes->compute_instance_slice_count;
    mig.multiprocessors = attributes->multiprocessor_count;
  }
  // The chip is the parent's: its architecture, not its bus or its power limits.
  d.architecture = parent.architecture;
  d.compute_capability = parent.compute_capability;
  const auto memory = device.memory();
  if (memory) {
    d.memory_total_bytes = memory->total_bytes;
  } else if (attributes) {
    d.memory_total_bytes = attributes->memory_mib << 20U;
  }
  d.capabilities.push_back(capability(device, "gpm", "GPM saturation metrics of its GPU instance",
                                      probe_mig_gpm(gpu, *gi)));
  d.capabilities.push_back(capability(device, "memory", "memory usage", as_status(memory)));
  d.capabilities.push_back(capability(device, "processes", "running compute processes",
                                      as_status(device.compute_processes())));
  d.mig = std::move(mig);
  return d;
}

// Appends the MIG devices of the GPU `gpu` (described as `parent`) to `out`.
void describe_mig_devices(const nvml::Device& gpu, const DeviceDescription& parent,
                          std::vector<DeviceDescription>& out) {
  auto devices = gpu.mig_devices();
  if (!devices) return;
  for (const nvml::Device& device : *devices) {
    if (auto d = describe_mig_device(gpu, parent, device)) out.push_back(std::move(*d));
  }
}

}  // namespace

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
    system.devices.back().mig_enabled = mig_enabled(*device);
  }
  // The MIG devices after every GPU, so that GPU i stays at position i.
  std::vector<DeviceDescription> instances;
  for (const auto& parent : system.devices) {
    if (parent.error || parent.mig_enabled != true) continue;
    if (auto gpu = session.try_device(parent.index)) describe_mig_devices(*gpu, parent, instances);
  }
  for (auto& d : instances) system.devices.push_back(std::move(d));
  return system;
}

std::optional<nvml::Device> find_mig_device(const nvml::Session& session,
                                            const DeviceDescription& d) {
  if (!d.mig || !d.uuid) return std::nullopt;
  auto parent = session.try_device(d.mig->parent_index);
  if (!parent) return std::nullopt;
  auto devices = parent->mig_devices();
  if (!devices) return std::nullopt;
  for (auto& device : *devices) {
    if (device.uuid().value_or("") == *d.uuid) return std::move(device);
  }
  return std::nullopt;
}

void describe_health(std::vector<DeviceDescription>& devices, const nvml::Session& session) {
  for (auto& d : devices) {
    if (d.error || d.mig) continue;  // a MIG device's counters are its GPU's
    auto device = session.try_device(d.index);
    if (!device) continue;
    HealthReader reader(std::move(*device));
    HealthRow row;
    if (reader.read(row) && row.present.any()) d.health = row;
  }
}

}  // namespace gpuscope::collect
