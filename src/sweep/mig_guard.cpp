#include "sweep/mig_guard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpuscope::sweep {
namespace {

std::string instance_name(const MigInstanceUse& instance) {
  return instance.profile.empty()
             ? fmt::format("GI {}", instance.gpu_instance_id)
             : fmt::format("GI {} ({})", instance.gpu_instance_id, instance.profile);
}

std::string list_of(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (k > 0) out += k + 1 == items.size() ? " and " : ", ";
    out += items[k];
  }
  return out;
}

}  // namespace

std::optional<std::string> mig_refusal(const MigGpuUse& gpu) {
  if (!gpu.mig_enabled) return std::nullopt;
  std::vector<std::string> held, others;
  std::set<std::string> users;
  for (const MigInstanceUse& instance : gpu.instances) {
    (instance.selected ? held : others).push_back(instance_name(instance));
    users.insert(instance.other_users.begin(), instance.other_users.end());
  }
  if (!others.empty()) {
    return fmt::format(
        "GPU {} is in MIG mode and this job holds {} of its {} instances ({}); a power limit or a "
        "clock applies to the whole GPU and would also slow whatever runs on {}: sweep a whole "
        "GPU, or a GPU in MIG mode whose instances are all this job's",
        gpu.gpu, held.size(), gpu.instances.size(), held.empty() ? "none" : list_of(held),
        list_of(others));
  }
  if (!users.empty()) {
    return fmt::format(
        "GPU {} is in MIG mode and processes of {} run on its instances; a power limit or a "
        "clock applies to the whole GPU and would slow their work too",
        gpu.gpu, list_of(std::vector<std::string>(users.begin(), users.end())));
  }
  return std::nullopt;
}

}  // namespace gpuscope::sweep
