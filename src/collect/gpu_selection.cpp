#include "collect/gpu_selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include "core/mig.hpp"

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

}  // namespace

std::size_t gpu_count(const std::vector<DeviceDescription>& devices) {
  std::size_t count = 0;
  while (count < devices.size() && !devices[count].mig) ++count;
  return count;
}

namespace {

std::string available(std::size_t gpus) {
  if (gpus == 0) return "the driver lists no GPU";
  return fmt::format("this machine has {} GPU{}: indices 0-{}", gpus, gpus == 1 ? "" : "s",
                     gpus - 1);
}

unsigned by_uuid(const std::string& entry, const std::vector<DeviceDescription>& devices) {
  std::optional<unsigned> found;
  for (const auto& d : devices) {
    if (d.mig || !d.uuid || d.uuid->rfind(entry, 0) != 0) continue;
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

void add_unique(std::vector<unsigned>& list, unsigned index) {
  if (std::find(list.begin(), list.end(), index) == list.end()) list.push_back(index);
}

// GPU `index` whole: itself and every MIG device on it; `whole` collects the GPUs in MIG mode.
void add_gpu(GpuSelection& selection, const std::vector<DeviceDescription>& devices, unsigned index,
             std::vector<unsigned>& whole) {
  add_unique(selection.indices, index);
  for (const auto& d : devices) {
    if (d.mig && d.mig->parent_index == index) {
      add_unique(selection.instances, d.index);
      add_unique(whole, index);
    }
  }
}

// What selecting GPUs in MIG mode whole samples.
std::string whole_mig_note(const GpuSelection& selection, const std::vector<unsigned>& whole) {
  std::size_t count = 0;
  for (unsigned row : selection.instances) {
    const unsigned parent = (row - kMigIndexBase) / 100;
    if (std::find(whole.begin(), whole.end(), parent) != whole.end()) ++count;
  }
  std::string gpus;
  for (unsigned gpu : whole) gpus += fmt::format("{}{}", gpus.empty() ? "" : ", ", gpu);
  const bool one = whole.size() == 1;
  return fmt::format(
      "GPU{} {} {} in MIG mode: {} MIG device{} on {} {} sampled too, each as a device of its own "
      "(gpuscope devices lists them; docs/mig.md)",
      one ? "" : "s", gpus, one ? "is" : "are", count, count == 1 ? "" : "s", one ? "it" : "them",
      count == 1 ? "is" : "are");
}

// A MIG UUID: the MIG device described with it and its parent, or (a MIG device NVML gives no
// GPU instance for) the parent whole.
// The MIG device named the CUDA 11.0 way, MIG-GPU-<GPU UUID>/<GI id>/<CI id> (drivers before
// R470 and the SLURM setups written for them), or nullptr.
const DeviceDescription* legacy_mig(const std::vector<DeviceDescription>& devices,
                                    const std::string& entry) {
  if (entry.rfind("MIG-GPU-", 0) != 0) return nullptr;
  const std::size_t first = entry.find('/');
  const std::size_t second = entry.find('/', first == std::string::npos ? first : first + 1);
  if (first == std::string::npos || second == std::string::npos) return nullptr;
  const std::string gpu_uuid = entry.substr(4, first - 4);
  const auto gi = as_index(entry.substr(first + 1, second - first - 1));
  if (!gi) return nullptr;
  for (const auto& d : devices) {
    if (d.mig || d.uuid != gpu_uuid) continue;
    for (const auto& m : devices) {
      if (m.mig && m.mig->parent_index == d.index && m.mig->gpu_instance_id == *gi) return &m;
    }
  }
  return nullptr;
}

void add_mig(GpuSelection& selection, const std::vector<DeviceDescription>& devices,
             const std::string& entry, const MigResolver& resolve_mig) {
  const DeviceDescription* legacy = legacy_mig(devices, entry);
  for (const auto& d : devices) {
    if (!d.mig || (legacy ? &d != legacy : d.uuid != entry)) continue;
    const unsigned parent = d.mig->parent_index;
    selection.mig_notes.push_back(fmt::format(
        "{} is MIG device {}: it is sampled with GPU {}'s power, energy, temperature and clocks, "
        "which the GPU does not split; GPU {}'s other MIG devices are not sampled",
        entry, mig_label(*d.mig), parent, parent));
    add_unique(selection.indices, parent);
    add_unique(selection.instances, d.index);
    return;
  }
  auto parent = resolve_mig ? resolve_mig(entry) : std::nullopt;
  if (!parent) {
    throw Error::usage(fmt::format("no GPU has the MIG device {}", entry), {},
                       "gpuscope devices and nvidia-smi -L list the MIG devices");
  }
  selection.notes.push_back(fmt::format(
      "{} is a MIG instance of GPU {} that NVML gives no GPU instance for: the whole GPU's "
      "metrics are sampled",
      entry, *parent));
  add_unique(selection.indices, *parent);
}

// The AMD GPUs in their library's order (ROCm's indices).
std::vector<const DeviceDescription*> amd_gpus(const std::vector<DeviceDescription>& devices) {
  std::vector<const DeviceDescription*> amd;
  for (const auto& d : devices) {
    if (d.vendor == Vendor::Amd && d.vendor_index) amd.push_back(&d);
  }
  std::sort(amd.begin(), amd.end(),
            [](const auto* a, const auto* b) { return *a->vendor_index < *b->vendor_index; });
  return amd;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The AMD GPU whose UUID is `entry` or starts with it (ROCR_VISIBLE_DEVICES writes "GPU-" and
// the unique id; AMD SMI's UUID has no prefix): compared without "GPU-", dashes and case.
std::optional<unsigned> amd_by_uuid(const std::string& entry,
                                    const std::vector<DeviceDescription>& devices) {
  std::string wanted = lower(entry);
  if (wanted.rfind("gpu-", 0) == 0) wanted.erase(0, 4);
  std::erase(wanted, '-');
  if (wanted.size() < 4) return std::nullopt;
  std::optional<unsigned> found;
  for (const auto* d : amd_gpus(devices)) {
    std::string uuid = lower(d->uuid.value_or(""));
    std::erase(uuid, '-');
    if (uuid.rfind(wanted, 0) != 0) continue;
    if (found) {
      throw Error::usage(fmt::format("GPU UUID prefix {} matches more than one GPU", entry), {},
                         "give more characters of the UUID (gpuscope devices lists them)");
    }
    found = d->index;
  }
  return found;
}

// The AMD GPUs `list` names as ROCm's variables do: indices into `visible` (the library's order,
// or what ROCR_VISIBLE_DEVICES left) or UUIDs. An index beyond them: every one, with a note.
std::vector<const DeviceDescription*> amd_subset(
    const std::vector<DeviceDescription>& devices,
    const std::vector<const DeviceDescription*>& visible, const std::string& list,
    const std::string& source, std::vector<std::string>& notes) {
  std::vector<const DeviceDescription*> chosen;
  for (const std::string& entry : split_list(list)) {
    const DeviceDescription* d = nullptr;
    if (auto index = as_index(entry)) {
      if (*index >= visible.size()) {
        notes.push_back(fmt::format(
            "{}={} names AMD GPUs beyond the {} this process can see; sampling all of them", source,
            list, visible.size()));
        return visible;
      }
      d = visible[*index];
    } else if (auto row = amd_by_uuid(entry, devices)) {
      d = &device_at(devices, *row);
    } else {
      throw Error::usage(fmt::format("{}: no AMD GPU is '{}'", source, entry), {},
                         "gpuscope devices --vendor amd lists the AMD GPUs, their indices and "
                         "UUIDs");
    }
    if (std::find(chosen.begin(), chosen.end(), d) == chosen.end()) chosen.push_back(d);
  }
  return chosen;
}

}  // namespace

GpuSelection select_amd_visible(const AmdVisibleLists& lists,
                                const std::vector<DeviceDescription>& devices) {
  GpuSelection selection;
  std::vector<const DeviceDescription*> visible = amd_gpus(devices);
  std::string said;
  for (const auto& [source, list] : {std::pair{"ROCR_VISIBLE_DEVICES", lists.rocr},
                                     std::pair{lists.hip_source.c_str(), lists.hip}}) {
    if (!list) continue;
    said += fmt::format("{}{}={}", said.empty() ? "" : ", ", source, *list);
    if (means_no_gpu(*list)) {
      selection.notes.push_back(
          fmt::format("{} is '{}': the job sees no AMD GPU, none is sampled", source, *list));
      return selection;
    }
    visible = amd_subset(devices, visible, *list, source, selection.notes);
  }
  for (const auto* d : visible) selection.indices.push_back(d->index);
  if (!said.empty())
    selection.notes.insert(selection.notes.begin(), "AMD GPUs selected by " + said);
  return selection;
}

std::vector<unsigned> GpuSelection::rows() const {
  std::vector<unsigned> out = indices;
  out.insert(out.end(), instances.begin(), instances.end());
  return out;
}

bool GpuSelection::keep_local_rank_gpu(std::size_t local_rank, std::size_t local_ranks) {
  if (local_ranks < 2 || indices.size() != local_ranks || local_rank >= indices.size()) {
    return false;
  }
  const unsigned gpu = indices[local_rank];
  indices = {gpu};
  // The MIG devices of that GPU stay (core/mig.hpp: a row index names its parent).
  std::erase_if(instances, [gpu](unsigned row) {
    return row < mig_device_index(gpu, 0) || row >= mig_device_index(gpu + 1, 0);
  });
  return true;
}

const DeviceDescription& device_at(const std::vector<DeviceDescription>& devices, unsigned index) {
  // GPU i is at position i; a MIG device is found by its row index.
  if (index < devices.size() && devices[index].index == index && !devices[index].mig) {
    return devices[index];
  }
  for (const auto& d : devices) {
    if (d.index == index) return d;
  }
  throw std::out_of_range(fmt::format("no device with index {}", index));
}

GpuSelection select_gpus(std::string_view list, const std::vector<DeviceDescription>& devices,
                         const MigResolver& resolve_mig) {
  GpuSelection selection;
  if (means_no_gpu(list)) {
    selection.notes.push_back("no GPU selected");
    return selection;
  }
  const std::size_t gpus = gpu_count(devices);
  std::vector<unsigned> whole;  // GPUs in MIG mode selected whole
  for (const std::string& entry : split_list(list)) {
    if (entry == "all") {
      for (std::size_t i = 0; i < gpus; ++i) add_gpu(selection, devices, devices[i].index, whole);
    } else if (auto index = as_index(entry)) {
      if (*index >= gpus) {
        throw Error::usage(fmt::format("GPU {} does not exist", *index), available(gpus),
                           "gpuscope devices lists the GPUs");
      }
      add_gpu(selection, devices, *index, whole);
    } else if (entry.rfind("GPU-", 0) == 0) {
      const auto amd = amd_by_uuid(entry, devices);  // ROCm writes "GPU-" too
      add_gpu(selection, devices, amd ? *amd : by_uuid(entry, devices), whole);
    } else if (entry.rfind("MIG-", 0) == 0) {
      add_mig(selection, devices, entry, resolve_mig);
    } else if (auto amd = amd_by_uuid(entry, devices)) {
      add_gpu(selection, devices, *amd, whole);
    } else {
      throw Error::usage(fmt::format("'{}' is not a GPU", entry), {},
                         "give indices (0,1), UUIDs (GPU-..., or an AMD GPU's), MIG ids (MIG-...) "
                         "or all");
    }
  }
  if (!whole.empty()) selection.mig_notes.push_back(whole_mig_note(selection, whole));
  return selection;
}

GpuSelection select_visible_gpus(std::string_view list, std::string_view source,
                                 const std::vector<DeviceDescription>& devices,
                                 const MigResolver& resolve_mig) {
  if (means_no_gpu(list)) {
    GpuSelection none;
    none.notes.push_back(
        fmt::format("{} is '{}': the job sees no GPU, none is sampled", source, list));
    return none;
  }
  const std::size_t gpus = gpu_count(devices);
  bool beyond = false;
  for (const std::string& entry : split_list(list)) {
    if (auto index = as_index(entry); index && *index >= gpus) beyond = true;
  }
  if (beyond) {
    GpuSelection all = select_gpus("all", devices, resolve_mig);
    all.notes.push_back(fmt::format(
        "{}={} names GPUs beyond the {} this process can see (the scheduler restricts the view); "
        "sampling all of them",
        source, list, gpus));
    return all;
  }
  GpuSelection selection = select_gpus(list, devices, resolve_mig);
  selection.notes.insert(selection.notes.begin(),
                         fmt::format("GPUs selected by {}={}", source, list));
  return selection;
}

std::optional<GpuSelection> amd_visible(const util::EnvLookup& env,
                                        const std::vector<DeviceDescription>& devices) {
  const bool amd = std::any_of(devices.begin(), devices.end(),
                               [](const auto& d) { return d.vendor == Vendor::Amd; });
  const bool nvidia = std::any_of(devices.begin(), devices.end(),
                                  [](const auto& d) { return d.vendor == Vendor::Nvidia; });
  if (!amd) return std::nullopt;
  AmdVisibleLists lists{env("ROCR_VISIBLE_DEVICES"), env("HIP_VISIBLE_DEVICES")};
  const auto cuda = env("CUDA_VISIBLE_DEVICES");
  if (!lists.hip && !nvidia && cuda) {
    lists.hip = cuda;
    lists.hip_source = "CUDA_VISIBLE_DEVICES";
  }
  if (!lists.rocr && !lists.hip) return std::nullopt;
  GpuSelection selection = select_amd_visible(lists, devices);
  if (!nvidia) return selection;
  std::vector<unsigned> nvidia_gpus;
  for (const auto& d : devices) {
    if (d.vendor == Vendor::Nvidia && !d.mig) nvidia_gpus.push_back(d.index);
  }
  if (cuda) {
    const auto chosen = select_visible_gpus(*cuda, "CUDA_VISIBLE_DEVICES", devices, {});
    nvidia_gpus.clear();
    for (unsigned index : chosen.indices) {
      if (device_at(devices, index).vendor == Vendor::Nvidia) nvidia_gpus.push_back(index);
    }
  }
  selection.indices.insert(selection.indices.begin(), nvidia_gpus.begin(), nvidia_gpus.end());
  return selection;
}

}  // namespace gpuscope::collect
