// A GPU's "mig" object: MIG mode with GPU instances of the model's real profiles
// (docs/scenarios.md, "MIG").
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "sim/mig.hpp"
#include "sim/noise.hpp"
#include "sim/parse_parts.hpp"

namespace gpuscope::sim {
namespace {

std::string known_profiles(std::string_view model) {
  std::string text;
  for (const MigProfile& profile : mig_profiles(model)) {
    text += (text.empty() ? "" : ", ") + std::string(profile.name);
  }
  return text;
}

std::string default_mig_uuid(std::uint64_t seed, std::size_t gpu, std::size_t instance) {
  std::string uuid = default_uuid(seed ^ 0x6D6967ULL, gpu * 16 + instance + 1000);
  return "MIG-" + uuid.substr(4);
}

// The first GPU instance id of the profile's range that no earlier instance took.
unsigned default_gi_id(const MigProfile& profile, const std::set<unsigned>& taken,
                       const std::string& pointer) {
  for (unsigned id = profile.first_gi_id; id <= profile.last_gi_id; ++id) {
    if (!taken.contains(id)) return id;
  }
  fail_at(pointer, "no GPU instance id left for another " + std::string(profile.name) +
                       " (give \"gpu_instance_id\")");
}

void check_memory_fits(const MigInstanceSpec& instance, const MigProfile& profile,
                       const std::string& pointer) {
  for (std::size_t p = 0; p < instance.phases.size(); ++p) {
    const Phase& phase = instance.phases[p];
    if (phase.memory_used_gib * 1024.0 > static_cast<double>(profile.memory_mib)) {
      fail_at(pointer + " phase " + std::to_string(p) + " (" + phase.name + ")",
              "memory_used_gib " + format_number(phase.memory_used_gib) + " does not fit in " +
                  std::string(profile.name) + " (" + std::to_string(profile.memory_mib) + " MiB)");
    }
  }
}

struct SliceCount {
  unsigned compute = 0, memory = 0;
  std::set<unsigned> gi_ids;
  std::set<unsigned> pids;  // a process runs in one instance
  std::map<std::string_view, unsigned> per_profile;
};

MigInstanceSpec parse_instance(const nlohmann::json& value, const std::string& pointer,
                               const GpuConfig& gpu, const GpuContext& context,
                               std::size_t gpu_index, std::size_t position, SliceCount& used) {
  ObjectReader reader(value, pointer);
  MigInstanceSpec instance;
  const std::optional<std::string> name = reader.optional_string("profile");
  if (!name)
    fail_at(pointer, "missing \"profile\" (one of " + known_profiles(gpu.spec.model) + ")");
  const MigProfile* profile = find_mig_profile(gpu.spec.model, *name);
  if (profile == nullptr) {
    fail_at(reader.child("profile"), "no MIG profile \"" + *name + "\" on " + gpu.spec.model +
                                         " (one of " + known_profiles(gpu.spec.model) + ")");
  }
  instance.profile = *name;
  instance.uuid = reader.string("uuid", default_mig_uuid(context.seed, gpu_index, position));
  if (!instance.uuid.starts_with("MIG-") || instance.uuid.size() <= 4 ||
      instance.uuid.size() >= 80) {
    fail_at(reader.child("uuid"),
            "\"" + instance.uuid + "\" is not a MIG device UUID like \"MIG-...\"");
  }
  if (reader.has("gpu_instance_id")) {
    instance.gpu_instance_id =
        static_cast<unsigned>(reader.unsigned_integer("gpu_instance_id", 0, 14));
  } else {
    instance.gpu_instance_id = default_gi_id(*profile, used.gi_ids, pointer);
  }
  if (!used.gi_ids.insert(instance.gpu_instance_id).second) {
    fail_at(reader.child("gpu_instance_id"),
            "GPU instance id " + std::to_string(instance.gpu_instance_id) + " is taken");
  }
  instance.compute_instance_id =
      static_cast<unsigned>(reader.unsigned_integer("compute_instance_id", 0, 7));
  instance.created_at_s = reader.number("created_at_s", 0, kNonNegative);
  instance.destroyed_at_s = reader.optional_number("destroyed_at_s", kPositive);
  if (instance.destroyed_at_s && *instance.destroyed_at_s <= instance.created_at_s) {
    fail_at(reader.child("destroyed_at_s"),
            "must be after created_at_s (" + format_number(instance.created_at_s) + ")");
  }
  instance.phases = parse_gpu_phases(reader, context);
  parse_processes(reader, instance.processes);
  reader.finish();
  for (const ProcessSpec& process : instance.processes) {
    if (!used.pids.insert(process.pid).second) {
      fail_at(reader.child("processes"),
              "pid " + std::to_string(process.pid) + " already runs in another instance");
    }
  }
  check_memory_fits(instance, *profile, pointer);
  used.compute += profile->compute_slices;
  used.memory += profile->memory_slices;
  if (++used.per_profile[profile->name] > profile->max_count) {
    fail_at(pointer, "more than " + std::to_string(profile->max_count) + " " +
                         std::string(profile->name) + " instances on one GPU");
  }
  if (used.compute > kMigComputeSlices || used.memory > kMigMemorySlices) {
    fail_at(pointer, "the instances need " + std::to_string(used.compute) + " compute and " +
                         std::to_string(used.memory) + " memory slices; the GPU has " +
                         std::to_string(kMigComputeSlices) + " and " +
                         std::to_string(kMigMemorySlices));
  }
  return instance;
}

// MIG mode turning off at `off_at_s` ends every instance then: each must be created before it.
void end_instances_at(MigSpec& mig, const std::string& where, const std::string& pointer) {
  const double off = *mig.off_at_s;
  for (std::size_t i = 0; i < mig.instances.size(); ++i) {
    MigInstanceSpec& instance = mig.instances[i];
    if (instance.created_at_s >= off) {
      fail_at(pointer + "/instances/" + std::to_string(i) + "/created_at_s",
              "the instance is created after MIG mode turns off (" + where + ")");
    }
    if (!instance.destroyed_at_s || *instance.destroyed_at_s > off) instance.destroyed_at_s = off;
  }
}

}  // namespace

void parse_mig(ObjectReader& gpu, GpuConfig& config, std::size_t index, const GpuContext& context) {
  const nlohmann::json* value = gpu.find("mig");
  if (value == nullptr) return;
  const std::string pointer = gpu.child("mig");
  if (mig_profiles(config.spec.model).empty()) {
    fail_at(pointer, config.spec.model +
                         " has no MIG profiles in the simulator (A100-SXM4-80GB, H100-SXM5-80GB)");
  }
  if (!config.mig_devices.empty()) {
    fail_at(pointer, "give either \"mig\" or \"mig_devices\", not both");
  }
  if (!config.processes.empty()) {
    fail_at(gpu.child("processes"),
            "a GPU in MIG mode runs processes in its instances: list them under mig/instances");
  }
  ObjectReader reader(*value, pointer);
  const nlohmann::json* list = reader.find("instances");
  MigSpec mig;
  mig.off_at_s = reader.optional_number("off_at_s", kPositive);
  reader.finish();
  if (list != nullptr) {
    const std::string where = reader.child("instances");
    if (!list->is_array()) fail_at(where, "expected an array of GPU instances");
    if (list->size() > kMaxMigDevices) {
      fail_at(where, std::to_string(list->size()) + " instances: a GPU has at most " +
                         std::to_string(kMaxMigDevices));
    }
    SliceCount used;
    for (std::size_t i = 0; i < list->size(); ++i) {
      mig.instances.push_back(parse_instance((*list)[i], where + "/" + std::to_string(i), config,
                                             context, index, i, used));
    }
  }
  if (mig.off_at_s) end_instances_at(mig, reader.child("off_at_s"), pointer);
  config.mig = std::move(mig);
}

}  // namespace gpuscope::sim
