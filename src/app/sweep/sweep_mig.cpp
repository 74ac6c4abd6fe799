#include "app/sweep/sweep_mig.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"
#include "processes/process_identity.hpp"
#include "sweep/mig_guard.hpp"

namespace gpuscope::app {
namespace {

// The users other than this one whose processes run on MIG device `mig` (what an unprivileged
// caller may read: each MIG device's own process list).
std::vector<std::string> other_users(const collect::NodeGpus& node, const DeviceDescription& mig) {
  std::vector<std::string> users;
  const unsigned me = getuid();
  for (unsigned pid : collect::mig_device_pids(node, mig)) {
    const processes::ProcessIdentity who = processes::resolve_process(pid);
    if (!who.uid || *who.uid == me) continue;
    users.push_back(who.user.value_or(fmt::format("uid {}", *who.uid)));
  }
  return users;
}

sweep::MigGpuUse use_of(const collect::NodeGpus& node, const collect::GpuSelection& selection,
                        const std::vector<DeviceDescription>& devices, unsigned gpu) {
  sweep::MigGpuUse use;
  use.gpu = gpu;
  use.mig_enabled = collect::device_at(devices, gpu).mig_enabled.value_or(false);
  if (!use.mig_enabled) return use;
  for (const DeviceDescription& d : devices) {
    if (!d.mig || d.mig->parent_index != gpu) continue;
    sweep::MigInstanceUse instance;
    instance.gpu_instance_id = d.mig->gpu_instance_id;
    instance.profile = d.mig->profile.value_or("");
    instance.selected = std::find(selection.instances.begin(), selection.instances.end(),
                                  d.index) != selection.instances.end();
    instance.other_users = other_users(node, d);
    use.instances.push_back(std::move(instance));
  }
  return use;
}

}  // namespace

void check_mig_gpus(const collect::NodeGpus& node, const collect::GpuSelection& selection,
                    const std::vector<DeviceDescription>& devices) {
  for (unsigned gpu : selection.indices) {
    const sweep::MigGpuUse use = use_of(node, selection, devices, gpu);
    if (auto why = sweep::mig_refusal(use)) {
      throw Error::usage(*why, {}, "gpuscope devices lists each GPU's MIG instances");
    }
    if (use.mig_enabled) {
      fmt::print(stderr,
                 "gpuscope: GPU {} is in MIG mode and its {} instance{} are all this job's: the "
                 "sweep sets the whole GPU\n",
                 gpu, use.instances.size(), use.instances.size() == 1 ? "" : "s");
    }
  }
}

}  // namespace gpuscope::app
