#include "collect/node_gpus.hpp"

#include <fmt/format.h>

#include <optional>

#include "collect/amd_describe.hpp"
#include "collect/amd_gpus.hpp"
#include "collect/nvidia_gpus.hpp"

namespace gpuscope::collect {
namespace {

// Opens NVML and describes its GPUs into `gpus`; the error when it cannot.
std::optional<Error> open_nvidia(const BackendOptions& options, NodeGpus& gpus) {
  try {
    auto library = open_backend(options);
    auto nvidia = std::make_unique<NvidiaGpus>(library);
    nvidia->describe(gpus.system);
    if (library->simulated()) gpus.system.scenario = options.simulate;
    gpus.vendors.push_back(std::move(nvidia));
    return std::nullopt;
  } catch (const Error& error) {
    return error;
  }
}

// Opens AMD SMI or ROCm SMI and appends its GPUs to `gpus`; the error when it cannot.
std::optional<Error> open_amd_gpus(const BackendOptions& options, NodeGpus& gpus) {
  try {
    auto amd = std::make_unique<AmdGpus>(open_amd(options));
    amd->describe(gpus.system);
    // After the NVIDIA GPUs, before the MIG devices: the GPUs come first (gpu_selection.hpp).
    const std::size_t first = gpu_count(gpus.system.devices);
    const auto at = gpus.system.devices.begin() + static_cast<std::ptrdiff_t>(first);
    gpus.system.devices.insert(at, gpus.system.amd->devices.begin(),
                               gpus.system.amd->devices.end());
    if (!options.simulate.empty()) gpus.system.scenario = options.simulate;
    gpus.vendors.push_back(std::move(amd));
    return std::nullopt;
  } catch (const Error& error) {
    gpus.system.amd.reset();
    return error;
  }
}

// For `gpuscope devices`: NVML's GPUs with their saturation sources and health now.
SystemDescription describe_nvidia(const BackendOptions& options) {
  auto library = open_backend(options);
  const NvidiaGpus nvidia(library);
  SystemDescription system;
  nvidia.describe(system);
  if (library->simulated()) system.scenario = options.simulate;
  nvidia.describe_details(system.devices, options);
  return system;
}

}  // namespace

const VendorGpus* NodeGpus::vendor_of(const DeviceDescription& d) const {
  for (const auto& vendor : vendors) {
    if (vendor->owns(d)) return vendor.get();
  }
  return nullptr;
}

NodeGpus open_node_gpus(const BackendOptions& options) {
  NodeGpus gpus;
  gpus.system.nvidia = false;
  const std::optional<Error> nvidia_error = open_nvidia(options, gpus);
  const bool nvidia_gpus = !nvidia_error && !gpus.system.devices.empty();
  // A library named for NVIDIA is what the user wants to use: its failure is the answer.
  if (nvidia_error && !options.nvml_library.empty()) throw *nvidia_error;
  const std::optional<Error> amd_error = open_amd_gpus(options, gpus);
  if (!amd_error) {
    gpus.system.nvidia = nvidia_gpus;
    if (nvidia_error && !nvidia_absent(*nvidia_error)) {
      gpus.notes.push_back(fmt::format("NVIDIA GPUs not sampled: {}", nvidia_error->what()));
    }
    return gpus;
  }
  gpus.system.nvidia = true;
  if (nvidia_gpus) {
    if (!amd_absent(*amd_error)) {
      gpus.notes.push_back(fmt::format("AMD GPUs not sampled: {}", amd_error->what()));
    }
    return gpus;
  }
  // No GPU of either vendor: an AMD problem other than "none here" is the one worth showing.
  if (!amd_absent(*amd_error)) throw *amd_error;
  if (nvidia_error) throw *nvidia_error;
  return gpus;  // NVML without GPUs: the caller says there is nothing to sample
}

SystemDescription describe_node(const BackendOptions& options, std::string_view vendor) {
  std::optional<Vendor> only;  // nullopt: all
  if (vendor != "all") {
    only = parse_vendor(vendor);
    if (!only) {
      throw Error::usage(fmt::format("--vendor {} is not a GPU vendor", vendor), {},
                         "use all, nvidia or amd");
    }
  }
  SystemDescription system;
  system.nvidia = false;
  std::optional<Error> nvidia_error;
  if (only != Vendor::Amd) {
    try {
      system = describe_nvidia(options);
    } catch (const Error& error) {
      nvidia_error = error;
    }
  }
  std::optional<Error> amd_error;
  if (only != Vendor::Nvidia) {
    try {
      AmdGpus(open_amd(options)).describe(system);
      if (!options.simulate.empty()) system.scenario = options.simulate;
    } catch (const Error& error) {
      amd_error = error;
    }
  }
  if (only == Vendor::Nvidia && nvidia_error) throw *nvidia_error;
  if (only == Vendor::Amd && amd_error) throw *amd_error;
  // A scenario or node with AMD GPUs only: the NVIDIA part says nothing.
  if (system.amd && system.devices.empty()) system.nvidia = false;
  const bool nvidia_listed = !nvidia_error && !system.devices.empty();
  if (nvidia_listed || system.amd) {
    // One vendor listed: the other's failure is said beside it, unless it is "none here".
    if (nvidia_listed && amd_error && !amd_absent(*amd_error)) {
      system.notes.push_back(fmt::format("AMD GPUs not listed: {}", amd_error->what()));
    }
    if (system.amd && nvidia_error && !nvidia_absent(*nvidia_error)) {
      system.notes.push_back(fmt::format("NVIDIA GPUs not listed: {}", nvidia_error->what()));
    }
    return system;
  }
  // No GPU of either vendor: an AMD problem other than "none here" is the one worth showing.
  if (amd_error && !amd_absent(*amd_error)) throw *amd_error;
  if (nvidia_error) throw *nvidia_error;
  return system;  // NVML without GPUs, listed as such
}

OpenedReaders open_node_readers(const NodeGpus& node, const std::vector<unsigned>& indices,
                                std::vector<DeviceDescription>& descriptions,
                                const BackendOptions& options, std::chrono::nanoseconds interval) {
  // Each vendor's share of the devices, opened together (the saturation source is chosen over
  // all of a vendor's GPUs at once).
  struct Share {
    std::vector<unsigned> indices;
    std::vector<DeviceDescription> descriptions;
    OpenedReaders opened;
    std::size_t next_reader = 0, next_description = 0;
  };
  std::vector<Share> shares(node.vendors.size());
  std::vector<std::size_t> owner;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    std::size_t v = 0;
    while (v < node.vendors.size() && !node.vendors[v]->owns(descriptions[k])) ++v;
    if (v == node.vendors.size()) {
      throw Error(
          fmt::format("no session for the {} GPUs to sample", vendor_word(descriptions[k].vendor)));
    }
    owner.push_back(v);
    shares[v].indices.push_back(indices[k]);
    shares[v].descriptions.push_back(descriptions[k]);
  }
  OpenedReaders out;
  for (std::size_t v = 0; v < shares.size(); ++v) {
    Share& s = shares[v];
    if (s.indices.empty()) continue;
    s.opened = node.vendors[v]->open_readers(s.indices, s.descriptions, options, interval);
    out.notes.insert(out.notes.end(), s.opened.notes.begin(), s.opened.notes.end());
  }
  // The readers keep the order of `indices`; a device gone since it was described has none.
  for (std::size_t k = 0; k < indices.size(); ++k) {
    Share& s = shares[owner[k]];
    DeviceDescription& d = descriptions[k];
    d = s.descriptions[s.next_description++];  // with its saturation source
    if (s.next_reader < s.opened.readers.size() &&
        s.opened.readers[s.next_reader]->index() == d.index) {
      out.readers.push_back(std::move(s.opened.readers[s.next_reader++]));
    }
  }
  return out;
}

std::vector<WatchedDevice> watched_devices(const NodeGpus& node,
                                           const std::vector<DeviceDescription>& sampled) {
  std::vector<WatchedDevice> devices;
  for (const DeviceDescription& d : sampled) {
    const VendorGpus* vendor = node.vendor_of(d);
    if (vendor == nullptr) continue;
    if (auto watched = vendor->watched(d, sampled)) devices.push_back(std::move(*watched));
  }
  return devices;
}

namespace {

std::unique_ptr<GpuControl> control_of(const NodeGpus& node, const DeviceDescription& d) {
  if (d.mig) {
    throw Error(fmt::format("device {} is a MIG device; settings are the whole GPU's", d.index));
  }
  const VendorGpus* vendor = node.vendor_of(d);
  if (vendor == nullptr)
    throw Error(fmt::format("no session for the {} GPUs to set", vendor_word(d.vendor)));
  return vendor->control(d);
}

}  // namespace

GpuControls open_controls(const NodeGpus& node, const std::vector<unsigned>& indices) {
  GpuControls out;
  for (unsigned index : indices) {
    out.push_back(control_of(node, device_at(node.system.devices, index)));
  }
  return out;
}

GpuControls open_all_controls(const NodeGpus& node) {
  GpuControls out;
  for (const DeviceDescription& d : node.system.devices) {
    if (!d.mig && !d.error) out.push_back(control_of(node, d));
  }
  return out;
}

MigResolver mig_resolver(const NodeGpus& node) {
  return [&node](const std::string& uuid) -> std::optional<unsigned> {
    for (const auto& vendor : node.vendors) {
      if (auto parent = vendor->mig_parent(uuid)) return parent;
    }
    return std::nullopt;
  };
}

std::vector<unsigned> mig_device_pids(const NodeGpus& node, const DeviceDescription& mig) {
  const VendorGpus* vendor = node.vendor_of(mig);
  return vendor != nullptr ? vendor->mig_device_pids(mig) : std::vector<unsigned>{};
}

}  // namespace gpuscope::collect
