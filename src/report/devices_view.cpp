#include "report/devices_view.hpp"

#include <fmt/format.h>

#include <functional>

namespace gpuscope::report {
namespace {

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string or_dash(const std::optional<std::string>& value) {
  return value ? *value : "-";
}

std::string format_watts(const std::optional<double>& w) {
  return w ? fmt::format("{:.0f} W", *w) : "-";
}

std::string memory_text(const std::optional<std::uint64_t>& bytes) {
  if (!bytes) return "-";
  const double mib = static_cast<double>(*bytes) / (1024.0 * 1024.0);
  return fmt::format("{:.1f} GiB ({:.0f} MiB)", mib / 1024.0, mib);
}

std::string power_text(const DeviceDescription& d) {
  if (!d.power_limit_w && !d.enforced_power_limit_w) return "-";
  std::string text = format_watts(d.power_limit_w ? d.power_limit_w : d.enforced_power_limit_w);
  std::vector<std::string> parts;
  if (d.default_power_limit_w) parts.push_back("default " + format_watts(d.default_power_limit_w));
  if (d.min_power_limit_w && d.max_power_limit_w) {
    parts.push_back(
        fmt::format("range {:.0f}–{:.0f} W", *d.min_power_limit_w, *d.max_power_limit_w));
  }
  if (d.enforced_power_limit_w && d.power_limit_w &&
      *d.enforced_power_limit_w != *d.power_limit_w) {
    parts.push_back("enforced " + format_watts(d.enforced_power_limit_w));
  }
  if (!parts.empty()) text += " (" + fmt::format("{}", fmt::join(parts, ", ")) + ")";
  return text;
}

std::string clocks_text(const DeviceDescription& d) {
  std::vector<std::string> parts;
  if (d.max_sm_clock_mhz) parts.push_back(fmt::format("SM {} MHz", *d.max_sm_clock_mhz));
  if (d.max_memory_clock_mhz)
    parts.push_back(fmt::format("memory {} MHz", *d.max_memory_clock_mhz));
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string count_or_dash(const HealthRow& h, HealthMetric m) {
  const auto v = h.get(m);
  return v ? fmt::format("{:.0f}", *v) : "-";
}

std::string yes_no(const HealthRow& h, HealthMetric m) {
  const auto v = h.get(m);
  return v ? (*v > 0 ? "YES" : "no") : "-";
}

// The health lines of one GPU: ECC, remapped rows, retired pages, PCIe replays.
void health_rows(const HealthRow& h,
                 const std::function<void(std::string_view, const std::string&)>& row) {
  using M = HealthMetric;
  if (const auto ecc = h.get(M::EccEnabled)) {
    row("ECC", fmt::format("{}; errors since the driver loaded {} corrected, {} uncorrected; "
                           "over its life {} corrected, {} uncorrected",
                           *ecc > 0 ? "on" : "off", count_or_dash(h, M::EccCorrectedVolatile),
                           count_or_dash(h, M::EccUncorrectedVolatile),
                           count_or_dash(h, M::EccCorrectedAggregate),
                           count_or_dash(h, M::EccUncorrectedAggregate)));
  }
  if (h.get(M::RemappedRowsCorrectable)) {
    row("Remapped rows", fmt::format("{} correctable, {} uncorrectable; pending {}, failed {}",
                                     count_or_dash(h, M::RemappedRowsCorrectable),
                                     count_or_dash(h, M::RemappedRowsUncorrectable),
                                     yes_no(h, M::RowRemapPending), yes_no(h, M::RowRemapFailure)));
  }
  if (h.get(M::RetiredPagesSbe) || h.get(M::RetiredPagesDbe)) {
    row("Retired pages",
        fmt::format("{} single-bit, {} double-bit; pending {}",
                    count_or_dash(h, M::RetiredPagesSbe), count_or_dash(h, M::RetiredPagesDbe),
                    yes_no(h, M::RetiredPagesPending)));
  }
  if (h.get(M::PcieReplays)) row("PCIe replays", count_or_dash(h, M::PcieReplays));
  if (h.get(M::NvlinkCrcFlitErrors) || h.get(M::NvlinkReplayErrors)) {
    row("NVLink errors", fmt::format("{} CRC flit, {} CRC data, {} replay, {} recovery",
                                     count_or_dash(h, M::NvlinkCrcFlitErrors),
                                     count_or_dash(h, M::NvlinkCrcDataErrors),
                                     count_or_dash(h, M::NvlinkReplayErrors),
                                     count_or_dash(h, M::NvlinkRecoveryErrors)));
  }
}

nlohmann::json health_json(const std::optional<HealthRow>& h) {
  if (!h) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& info : kHealthMetrics) {
    if (const auto v = h->get(info.id)) out[std::string(info.name)] = *v;
  }
  return out;
}

std::string gib_text(const std::optional<std::uint64_t>& bytes) {
  if (!bytes) return "-";
  return fmt::format("{:.1f} GiB", static_cast<double>(*bytes) / (1024.0 * 1024.0 * 1024.0));
}

// One MIG device on a line: "GI 1  4g.40gb  64 SMs  39.5 GiB  MIG-…".
std::string mig_line(const DeviceDescription& d) {
  const MigIdentity& m = *d.mig;
  std::string line = fmt::format("GI {}", m.gpu_instance_id);
  if (m.compute_instance_id && *m.compute_instance_id != 0) {
    line += fmt::format(" CI {}", *m.compute_instance_id);
  }
  line += fmt::format("  {}", m.profile.value_or(d.name.value_or("?")));
  if (m.gpu_slices && m.parent_slices) {
    line += fmt::format("  {}/{} slices", *m.gpu_slices, *m.parent_slices);
  }
  if (m.multiprocessors) line += fmt::format("  {} SMs", *m.multiprocessors);
  line +=
      fmt::format("  {}  {}  (index {})", gib_text(d.memory_total_bytes), or_dash(d.uuid), d.index);
  return line;
}

// The MIG mode of GPU `gpu` and its MIG devices among `devices`.
void mig_rows(const DeviceDescription& gpu, const std::vector<DeviceDescription>& devices,
              const std::function<void(std::string_view, const std::string&)>& row) {
  if (!gpu.mig_enabled) return;
  if (!*gpu.mig_enabled) {
    row("MIG", "off");
    return;
  }
  std::vector<const DeviceDescription*> instances;
  for (const auto& d : devices) {
    if (d.mig && d.mig->parent_index == gpu.index) instances.push_back(&d);
  }
  if (instances.empty()) {
    row("MIG", "on, no MIG devices (no GPU instance is created; nothing can run on this GPU)");
    return;
  }
  row("MIG", fmt::format("on, {} MIG device{}; power, energy, temperature and clocks are the "
                         "whole GPU's",
                         instances.size(), instances.size() == 1 ? "" : "s"));
  for (std::size_t i = 0; i < instances.size(); ++i) {
    row(i == 0 ? "MIG devices" : "", mig_line(*instances[i]));
  }
}

nlohmann::json mig_json(const MigIdentity& m) {
  return {{"parent_index", m.parent_index},
          {"mig_index", m.mig_index},
          {"gpu_instance_id", m.gpu_instance_id},
          {"compute_instance_id", or_null(m.compute_instance_id)},
          {"profile", or_null(m.profile)},
          {"gpu_slices", or_null(m.gpu_slices)},
          {"compute_slices", or_null(m.compute_slices)},
          {"multiprocessors", or_null(m.multiprocessors)},
          {"parent_slices", or_null(m.parent_slices)}};
}

nlohmann::json capabilities_json(const DeviceDescription& d) {
  nlohmann::json caps = nlohmann::json::object();
  for (const auto& c : d.capabilities) {
    caps[c.key] = {{"supported", c.supported}, {"label", c.label}};
    if (!c.supported) caps[c.key]["reason"] = c.detail;
  }
  return caps;
}

nlohmann::json mig_device_json(const DeviceDescription& d) {
  return {{"index", d.index},
          {"name", or_null(d.name)},
          {"uuid", or_null(d.uuid)},
          {"memory_total_bytes", or_null(d.memory_total_bytes)},
          {"mig", mig_json(*d.mig)},
          {"capabilities", capabilities_json(d)},
          {"saturation",
           {{"source", or_null(d.saturation_source)}, {"detail", or_null(d.saturation_detail)}}}};
}

// An AMD GPU in JSON: as an NVIDIA GPU's, without what AMD's libraries have no word for.
nlohmann::json amd_device_json(const DeviceDescription& d) {
  return {{"index", d.index},
          {"library_index", or_null(d.vendor_index)},
          {"name", or_null(d.name)},
          {"uuid", or_null(d.uuid)},
          {"pci_bus_id", or_null(d.pci_bus_id)},
          {"memory_total_bytes", or_null(d.memory_total_bytes)},
          {"power_limit_w",
           {{"current", or_null(d.power_limit_w)},
            {"default", or_null(d.default_power_limit_w)},
            {"min", or_null(d.min_power_limit_w)},
            {"max", or_null(d.max_power_limit_w)}}},
          {"max_clocks_mhz", {{"graphics", or_null(d.max_graphics_clock_mhz)}}},
          {"capabilities", capabilities_json(d)},
          {"saturation", {{"source", nullptr}, {"detail", or_null(d.saturation_detail)}}}};
}

// One GPU's block: "<label> <index>  <name>" and its rows; MIG devices and health under it.
void device_block(std::string& out, const DeviceDescription& d,
                  const std::vector<DeviceDescription>& devices, std::string_view label) {
  out += '\n';
  if (d.error) {
    out += fmt::format("{} {}  unavailable: {}\n", label, d.index, *d.error);
    return;
  }
  out += fmt::format("{} {}  {}\n", label, d.index, or_dash(d.name));
  auto row = [&out](std::string_view name, const std::string& value) {
    out += fmt::format("  {:<14}{}\n", name, value);
  };
  row("UUID", or_dash(d.uuid));
  if (d.vendor_index && *d.vendor_index != d.index) {
    // A node with NVIDIA GPUs too: AMD indices follow theirs (docs/amd.md).
    row("Library index", fmt::format("{} (ROCR_VISIBLE_DEVICES counts so)", *d.vendor_index));
  }
  row("PCI bus id", or_dash(d.pci_bus_id));
  if (label == "GPU" || d.architecture || d.compute_capability) {
    std::string arch = or_dash(d.architecture);
    if (d.compute_capability) arch += " (compute capability " + *d.compute_capability + ")";
    row("Architecture", arch);
  }
  row("Memory", memory_text(d.memory_total_bytes));
  row("Power limit", power_text(d));
  row("Max clocks", d.max_graphics_clock_mhz && !d.max_sm_clock_mhz
                        ? fmt::format("graphics {} MHz", *d.max_graphics_clock_mhz)
                        : clocks_text(d));
  std::vector<std::string> supported;
  std::vector<std::string> unsupported;
  for (const auto& c : d.capabilities) {
    (c.supported ? supported : unsupported)
        .push_back(c.supported ? c.label : c.label + ": " + c.detail);
  }
  row("Saturation", d.saturation_source
                        ? fmt::format("{} ({})", *d.saturation_source == "dcgm" ? "DCGM" : "GPM",
                                      d.saturation_detail.value_or(""))
                        : "none: " + d.saturation_detail.value_or("not probed"));
  row("Supports", supported.empty() ? "-" : fmt::format("{}", fmt::join(supported, ", ")));
  for (std::size_t i = 0; i < unsupported.size(); ++i) {
    row(i == 0 ? "Unsupported" : "", unsupported[i]);
  }
  mig_rows(d, devices, row);
  if (d.health) health_rows(*d.health, row);
}

void amd_text(std::string& out, const AmdSystemDescription& amd, bool after_nvidia) {
  if (after_nvidia) out += '\n';
  const std::size_t n = amd.devices.size();
  out += fmt::format("{} AMD GPU{} · {}{} ({})\n", n, n == 1 ? "" : "s", amd.library,
                     amd.library_version ? " " + *amd.library_version : "", amd.library_path);
  if (amd.fallback_reason) out += fmt::format("AMD SMI not used: {}\n", *amd.fallback_reason);
  for (const auto& d : amd.devices) device_block(out, d, amd.devices, "AMD GPU");
}

}  // namespace

std::string devices_text(const SystemDescription& system) {
  std::string out;
  if (system.nvidia) {
    std::vector<std::string> header;
    if (system.driver_version) header.push_back("driver " + *system.driver_version);
    if (system.cuda_driver_version) header.push_back("CUDA " + *system.cuda_driver_version);
    if (system.nvml_version) header.push_back("NVML " + *system.nvml_version);
    std::size_t gpus = 0;
    for (const auto& d : system.devices) {
      if (!d.mig) ++gpus;
    }
    header.push_back(fmt::format("{} GPU{}", gpus, gpus == 1 ? "" : "s"));
    out += fmt::format("{}\n", fmt::join(header, " · "));
  }
  if (system.scenario) out += fmt::format("simulated GPUs: scenario {}\n", *system.scenario);
  for (const auto& d : system.devices) {
    if (!d.mig) device_block(out, d, system.devices, "GPU");  // a MIG device: under its GPU
  }
  if (system.amd) amd_text(out, *system.amd, system.nvidia);
  for (const auto& note : system.notes) out += fmt::format("\nnote: {}\n", note);
  return out;
}

nlohmann::json devices_json(const SystemDescription& system) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : system.devices) {
    if (d.mig) continue;  // in its GPU's mig_devices
    nlohmann::json device = {
        {"index", d.index},
        {"error", or_null(d.error)},
        {"name", or_null(d.name)},
        {"uuid", or_null(d.uuid)},
        {"pci_bus_id", or_null(d.pci_bus_id)},
        {"architecture", or_null(d.architecture)},
        {"compute_capability", or_null(d.compute_capability)},
        {"memory_total_bytes", or_null(d.memory_total_bytes)},
        {"power_limit_w",
         {{"current", or_null(d.power_limit_w)},
          {"enforced", or_null(d.enforced_power_limit_w)},
          {"default", or_null(d.default_power_limit_w)},
          {"min", or_null(d.min_power_limit_w)},
          {"max", or_null(d.max_power_limit_w)}}},
        {"max_clocks_mhz",
         {{"sm", or_null(d.max_sm_clock_mhz)},
          {"memory", or_null(d.max_memory_clock_mhz)},
          {"graphics", or_null(d.max_graphics_clock_mhz)}}},
    };
    device["capabilities"] = capabilities_json(d);
    device["saturation"] = {{"source", or_null(d.saturation_source)},
                            {"detail", or_null(d.saturation_detail)}};
    device["health"] = health_json(d.health);
    device["mig_enabled"] = or_null(d.mig_enabled);
    nlohmann::json instances = nlohmann::json::array();
    for (const auto& m : system.devices) {
      if (m.mig && m.mig->parent_index == d.index) instances.push_back(mig_device_json(m));
    }
    device["mig_devices"] = std::move(instances);
    devices.push_back(std::move(device));
  }
  const std::size_t gpu_count = devices.size();
  nlohmann::json amd = nullptr;
  if (system.amd) {
    nlohmann::json amd_devices = nlohmann::json::array();
    for (const auto& d : system.amd->devices) amd_devices.push_back(amd_device_json(d));
    amd = {{"library", system.amd->library},
           {"library_path", system.amd->library_path},
           {"library_version", or_null(system.amd->library_version)},
           {"fallback_reason", or_null(system.amd->fallback_reason)},
           {"device_count", system.amd->devices.size()},
           {"devices", std::move(amd_devices)}};
  }
  return {
      {"driver_version", or_null(system.driver_version)},
      {"cuda_driver_version", or_null(system.cuda_driver_version)},
      {"nvml_version", or_null(system.nvml_version)},
      {"library", system.library_path},
      {"simulated_scenario", or_null(system.scenario)},
      {"device_count", gpu_count},
      {"devices", std::move(devices)},
      {"amd", std::move(amd)},
      {"notes", system.notes},
  };
}

}  // namespace gpuscope::report
