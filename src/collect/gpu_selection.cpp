#include "collect/gpu_selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace gpuscope::collect {
namespace {

std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> entries;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    std::string entry(list.substr(start, comma - start));
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (!entry.empty()) entries.push_back(std::move(entry));
    start = comma + 1;
  }
  return entries;
}

std::optional<unsigned> as_index(const std::string& entry) {
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), value);
  if (ec != std::errc() || ptr != entry.data() + entry.size()) return std::nullopt;
  return value;
}

std::string available(const std::vector<DeviceDescription>& devices) {
  if (devices.empty()) return "the driver lists no GPU";
  return fmt::format("this machine has {} GPU{}: indices 0-{}", devices.size(),
                     devices.size() == 1 ? "" : "s", devices.size() - 1);
}

unsigned by_uuid(const std::string& entry, const std::vector<DeviceDescription>& devices) {
  std::optional<unsigned> found;
  for (const auto& d : devices) {
    if (!d.uuid || d.uuid->rfind(entry, 0) != 0) continue;
    if (*d.uuid == entry) return d.index;  // an exact match wins over prefixes
    if (found) {
      throw Error::usage(fmt::format("GPU UUID prefix {} matches more than one GPU", entry), {},
                         "give more characters of the UUID (gpuscope devices lists them)");
    }
    found = d.index;
  }
  if (!found) {
    throw Error::usage(fmt::format("no GPU has the UUID {}", entry), {},
                       "gpuscope devices lists the GPUs and their UUIDs");
  }
  return *found;
}

bool means_no_gpu(std::string_view list) {
  return list.empty() || list == "-1" || list == "NoDevFiles" || list == "none";
}

}  // namespace

GpuSelection select_gpus(std::string_view list, const std::vector<DeviceDescription>& devices,
                         const MigResolver& resolve_mig) {
  GpuSelection selection;
  if (means_no_gpu(list)) {
    selection.notes.push_back("no GPU selected");
    return selection;
  }
  auto add = [&selection](unsigned index) {
    if (std::find(selection.indices.begin(), selection.indices.end(), index) ==
        selection.indices.end()) {
      selection.indices.push_back(index);
    }
  };
  for (const std::string& entry : split_list(list)) {
    if (entry == "all") {
      for (const auto& d : devices) add(d.index);
    } else if (auto index = as_index(entry)) {
      if (*index >= devices.size()) {
        throw Error::usage(fmt::format("GPU {} does not exist", *index), available(devices),
                           "gpuscope devices lists the GPUs");
      }
      add(*index);
    } else if (entry.rfind("GPU-", 0) == 0) {
      add(by_uuid(entry, devices));
    } else if (entry.rfind("MIG-", 0) == 0) {
      auto parent = resolve_mig ? resolve_mig(entry) : std::nullopt;
      if (!parent) {
        throw Error::usage(fmt::format("no GPU has the MIG device {}", entry), {},
                           "nvidia-smi -L lists the MIG devices");
      }
      selection.notes.push_back(fmt::format(
          "{} is a MIG instance of GPU {}: the whole GPU's metrics are sampled", entry, *parent));
      add(*parent);
    } else {
      throw Error::usage(fmt::format("'{}' is not a GPU", entry), {},
                         "give NVML indices (0,1), UUIDs (GPU-...), MIG ids (MIG-...) or all");
    }
  }
  return selection;
}

GpuSelection select_visible_gpus(std::string_view list, std::string_view source,
                                 const std::vector<DeviceDescription>& devices,
                                 const MigResolver& resolve_mig) {
  if (means_no_gpu(list)) {
    return {{}, {fmt::format("{} is '{}': the job sees no GPU, none is sampled", source, list)}};
  }
  bool beyond = false;
  for (const std::string& entry : split_list(list)) {
    if (auto index = as_index(entry); index && *index >= devices.size()) beyond = true;
  }
  if (beyond) {
    GpuSelection all;
    for (const auto& d : devices) all.indices.push_back(d.index);
    all.notes.push_back(fmt::format(
        "{}={} names GPUs beyond the {} this process can see (the scheduler restricts the view); "
        "sampling all of them",
        source, list, devices.size()));
    return all;
  }
  GpuSelection selection = select_gpus(list, devices, resolve_mig);
  selection.notes.insert(selection.notes.begin(),
                         fmt::format("GPUs selected by {}={}", source, list));
  return selection;
}

}  // namespace gpuscope::collect
