// What a process's cgroup says about who runs it: the container (Docker, Podman, containerd,
// CRI-O), the Kubernetes pod and its QoS class, the SLURM job and step. Read from the path
// alone, both cgroup drivers (systemd's scopes and slices, cgroupfs's plain folders), cgroup v1
// and v2. A shape this code does not know gives absent fields, never a guess.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::processes {

struct CgroupIdentity {
  std::optional<std::string> path;               // the cgroup path that was used
  std::optional<std::string> container_id;       // full id as in the path (usually 64 hex)
  std::optional<std::string> container_runtime;  // "docker", "podman", "containerd", "cri-o",
                                                 // or "kubernetes" when a pod's container id
                                                 // has no runtime marker (cgroupfs driver)
  std::optional<std::string> pod_uid;            // Kubernetes pod UID: a UUID with dashes (the
                                                 // systemd driver writes '_' for '-'), or a static
                                                 // pod's 32 hex digits
  std::optional<std::string> pod_qos;            // "guaranteed", "burstable", "besteffort"
  std::optional<std::string> slurm_job_id;       // e.g. "4242"
  std::optional<std::string> slurm_step;         // "0", "batch", "extern", "interactive"
};

// Parses one cgroup path ("/kubepods.slice/..."). Unknown shapes: every field but path absent
// (path too is absent for an empty string). Container ids are hex of at least 12 digits;
// anything else is not an id. A container runtime's monitor (podman's libpod-conmon-<id>.scope,
// CRI-O's crio-conmon-<id>.scope) gives the runtime but no container id: it is not the
// container. In nested containers the outermost one, which the host's runtime knows, wins.
CgroupIdentity parse_cgroup_path(std::string_view path);

// Parses the text of /proc/PID/cgroup (v2: one line "0::/path"; v1: "N:controllers:/path"
// lines; hybrid: both) and picks the line that identifies the most fields; ties go to the v2
// line, then to the v1 controllers memory, pids, cpu/cpuacct, name=systemd, devices, freezer,
// then to the first line. When no line is recognised, the path is that of the line the same
// order prefers. Malformed lines are skipped; no valid line gives every field absent.
CgroupIdentity parse_proc_cgroup(std::string_view content);

}  // namespace gpuscope::processes
