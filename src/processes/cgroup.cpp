#include "processes/cgroup.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>

namespace gpuscope::processes {
namespace {

// Container ids are hex; Docker and its kin print 12 digits of the 64 in a short id, so fewer
// than that is not an id.
constexpr std::size_t kMinContainerIdDigits = 12;
// Pod UIDs as the kubelet writes them into a pod's folder name: a UUID (8-4-4-4-12 hex digits),
// or for a static pod the MD5 of its manifest (32 hex digits, no dashes).
constexpr std::size_t kPodUidGroups[] = {8, 4, 4, 4, 12};
constexpr std::size_t kStaticPodUidDigits = 32;

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool is_decimal_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(), is_hex_digit);
}

bool is_container_id(std::string_view text) {
  return text.size() >= kMinContainerIdDigits && is_hex(text);
}

bool is_number(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), is_decimal_digit);
}

std::string_view without_suffix(std::string_view text, std::string_view suffix) {
  if (text.ends_with(suffix)) text.remove_suffix(suffix.size());
  return text;
}

// A pod UID as the kubelet wrote it in a folder name, its groups joined by `separator` ('-'
// under the cgroupfs driver, '_' under the systemd driver, whose slice names use '-' between
// levels), with its dashes back; nullopt when it is not a UID.
std::optional<std::string> pod_uid(std::string_view text, char separator) {
  if (text.size() == kStaticPodUidDigits && is_hex(text)) return std::string(text);
  std::string uid;
  std::size_t at = 0;
  for (const std::size_t digits : kPodUidGroups) {
    if (at > 0) {
      if (at >= text.size() || text[at] != separator) return std::nullopt;
      uid += '-';
      ++at;
    }
    const std::string_view group = text.substr(at, digits);
    if (group.size() != digits || !is_hex(group)) return std::nullopt;
    uid += group;
    at += digits;
  }
  if (at != text.size()) return std::nullopt;
  return uid;
}

// A container runtime's unit or folder: "<prefix><id>", with ".scope" under the systemd driver.
struct RuntimePrefix {
  std::string_view prefix;
  const char* runtime;
  bool monitor;  // the runtime's monitor process (conmon), not the container
};

// Longer prefixes first: "crio-conmon-" must not be read as "crio-" and an id "conmon-...".
constexpr RuntimePrefix kRuntimePrefixes[] = {
    {"cri-containerd-", "containerd", false},
    {"crio-conmon-", "cri-o", true},
    {"crio-", "cri-o", false},
    {"libpod-conmon-", "podman", true},
    {"libpod-", "podman", false},
    {"docker-", "docker", false},
    {"nerdctl-", "containerd", false},
};

// Reads the container from one folder of the path, if it names one: a runtime's unit
// ("docker-<id>.scope", "libpod-<id>", ...), or a bare id under "docker" (Docker's cgroupfs
// driver) or under a pod (the kubelet's cgroupfs driver, which does not say the runtime).
void read_container(std::string_view folder, std::string_view parent, CgroupIdentity& identity) {
  const std::string_view name = without_suffix(folder, ".scope");
  for (const auto& runtime : kRuntimePrefixes) {
    if (!name.starts_with(runtime.prefix)) continue;
    const std::string_view id = name.substr(runtime.prefix.size());
    if (!is_container_id(id)) return;  // "docker-foo.scope" is some other unit, not a container
    identity.container_runtime = runtime.runtime;
    if (!runtime.monitor) identity.container_id = std::string(id);
    return;
  }
  if (!is_container_id(folder)) return;
  if (parent == "docker") {
    identity.container_runtime = "docker";
  } else if (identity.pod_uid) {
    identity.container_runtime = "kubernetes";
  } else {
    return;  // an id under an unknown parent: whose it is cannot be told
  }
  identity.container_id = std::string(folder);
}

// One level below "kubepods": the QoS class ("burstable", "besteffort"; guaranteed pods have no
// level of their own) or the pod ("pod<uid>", the UID's groups joined by `separator`).
void read_pod_level(std::string_view level, char separator, CgroupIdentity& identity) {
  if (level == "burstable" || level == "besteffort") {
    identity.pod_qos = std::string(level);
  } else if (level.starts_with("pod")) {
    identity.pod_uid = pod_uid(level.substr(3), separator);
  }
}

// Reads the pod from one folder of the path. The kubelet's systemd driver repeats every level of
// the slice hierarchy in the name, '-' between levels ("kubepods-burstable-pod<uid>.slice", or
// "kubelet-kubepods-..." under a cgroup root of "/kubelet"); its cgroupfs driver has one folder
// per level ("kubepods/burstable/pod<uid>").
void read_kubernetes(std::string_view folder, bool& in_kubepods, CgroupIdentity& identity) {
  if (folder.ends_with(".slice")) {
    std::string_view levels = without_suffix(folder, ".slice");
    bool below_kubepods = false;
    while (!levels.empty()) {
      const std::size_t dash = levels.find('-');
      const std::string_view level = levels.substr(0, dash);
      levels = dash == std::string_view::npos ? std::string_view() : levels.substr(dash + 1);
      if (level == "kubepods") {
        below_kubepods = in_kubepods = true;
      } else if (below_kubepods) {
        read_pod_level(level, '_', identity);
      }
    }
  } else if (folder == "kubepods") {
    in_kubepods = true;
  } else if (in_kubepods) {
    read_pod_level(folder, '-', identity);
  }
}

// Reads the SLURM job and step from one folder of the path, below a folder whose name starts
// with "slurm": task/cgroup's v1 "/slurm/uid_<uid>/job_<id>/step_<step>/task_<n>" (or
// "/slurm_<node>/..." with several slurmd per host) and v2
// "/system.slice/slurmstepd.scope/job_<id>/step_<step>/user/task_<n>".
void read_slurm(std::string_view folder, std::string_view parent, bool& in_slurm,
                CgroupIdentity& identity) {
  if (!in_slurm) {
    in_slurm = folder.starts_with("slurm");
  } else if (!identity.slurm_job_id) {
    if (folder.starts_with("job_") && is_number(folder.substr(4))) {
      identity.slurm_job_id = std::string(folder.substr(4));
    }
  } else if (!identity.slurm_step && parent.starts_with("job_") && folder.starts_with("step_")) {
    const std::string_view step = folder.substr(5);
    if (is_number(step) || step == "batch" || step == "extern" || step == "interactive") {
      identity.slurm_step = std::string(step);
    }
  }
}

std::size_t fields_identified(const CgroupIdentity& identity) {
  return static_cast<std::size_t>(identity.container_id.has_value()) +
         static_cast<std::size_t>(identity.container_runtime.has_value()) +
         static_cast<std::size_t>(identity.pod_uid.has_value()) +
         static_cast<std::size_t>(identity.pod_qos.has_value()) +
         static_cast<std::size_t>(identity.slurm_job_id.has_value()) +
         static_cast<std::size_t>(identity.slurm_step.has_value());
}

// One line of /proc/PID/cgroup: "hierarchy-id:controllers:path".
struct CgroupLine {
  bool unified = false;  // the v2 line, "0::/path"
  std::string_view controllers;
  std::string_view path;
};

std::optional<CgroupLine> parse_line(std::string_view line) {
  const std::size_t first = line.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t second = line.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const std::string_view id = line.substr(0, first);
  CgroupLine parsed;
  parsed.controllers = line.substr(first + 1, second - first - 1);
  parsed.path = line.substr(second + 1);  // a path may hold ':' itself
  parsed.unified = id == "0" && parsed.controllers.empty();
  if (!is_number(id) || !parsed.path.starts_with('/')) return std::nullopt;
  // v1 hierarchies have ids from 1 and at least one controller; v2 has id 0 and none.
  if (!parsed.unified && (id == "0" || parsed.controllers.empty())) return std::nullopt;
  return parsed;
}

// Lower is preferred: the v2 line, then the v1 hierarchies where container runtimes, the kubelet
// and SLURM's task/cgroup always put a process, then the rest.
int preference(const CgroupLine& line) {
  if (line.unified) return 0;
  constexpr std::string_view kPreferred[] = {"memory",       "pids",    "cpu",    "cpuacct",
                                             "name=systemd", "devices", "freezer"};
  constexpr int kRanks[] = {1, 2, 3, 3, 4, 5, 6};
  int best = 7;
  std::string_view rest = line.controllers;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view controller = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    for (std::size_t i = 0; i < std::size(kPreferred); ++i) {
      if (controller == kPreferred[i]) best = std::min(best, kRanks[i]);
    }
  }
  return best;
}

}  // namespace

CgroupIdentity parse_cgroup_path(std::string_view path) {
  CgroupIdentity identity;
  if (path.empty()) return identity;
  identity.path = std::string(path);
  // cgroup v2 marks a cgroup removed under a live (or zombie) process so; its shape still holds.
  std::string_view rest = without_suffix(path, " (deleted)");
  bool in_kubepods = false;
  bool in_slurm = false;
  std::string_view parent;
  while (!rest.empty()) {
    const std::size_t slash = rest.find('/');
    const std::string_view folder = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (folder.empty()) continue;
    // The first pod and the outermost container win: what is below them is their own business.
    if (!identity.pod_uid) read_kubernetes(folder, in_kubepods, identity);
    if (!identity.container_runtime) read_container(folder, parent, identity);
    read_slurm(folder, parent, in_slurm, identity);
    parent = folder;
  }
  // The QoS class is the pod's: without a pod there is none to give; a pod with no QoS level of
  // its own is a guaranteed one.
  if (!identity.pod_uid) {
    identity.pod_qos.reset();
  } else if (!identity.pod_qos) {
    identity.pod_qos = "guaranteed";
  }
  return identity;
}

CgroupIdentity parse_proc_cgroup(std::string_view content) {
  CgroupIdentity best;
  std::size_t best_fields = 0;
  int best_preference = 0;
  bool found = false;
  while (!content.empty()) {
    const std::size_t newline = content.find('\n');
    const std::string_view line = content.substr(0, newline);
    content = newline == std::string_view::npos ? std::string_view() : content.substr(newline + 1);
    const auto parsed = parse_line(line);
    if (!parsed) continue;
    CgroupIdentity identity = parse_cgroup_path(parsed->path);
    const std::size_t fields = fields_identified(identity);
    const int rank = preference(*parsed);
    if (!found || fields > best_fields || (fields == best_fields && rank < best_preference)) {
      best = std::move(identity);
      best_fields = fields;
      best_preference = rank;
      found = true;
    }
  }
  return best;
}

}  // namespace gpuscope::processes
