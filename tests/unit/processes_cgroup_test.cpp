// processes/cgroup: who runs a process, read from /proc/PID/cgroup as real hosts write it
// (cgroup v1, v2 and hybrid; systemd and cgroupfs drivers; Docker, Podman, containerd, CRI-O,
// Kubernetes in each QoS class, SLURM's task/cgroup), and unknown shapes giving absent fields.
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "processes/cgroup.hpp"

namespace gpuscope::processes {
namespace {

const std::string kDockerId = "cf3f95e1d2adb3154fc9653a14b8c0f3a35bde5e168a39a4b8c31ad7292f3849";
const std::string kInnerId = "ab5352f42db36a17b21ba4e712aee7d67ebe9900250d99c7be6e639e4ead29a4";
const std::string kPodmanId = "0537bbfbb7c0c38f1c1dfb55e03066eef150c3935c5414478fe1442efd272c20";
const std::string kContainerdId =
    "68b261df10c564fa59492dbb5ceafdabbfdca0eb4a9c056afe193e7a2013101b";
const std::string kCrioId = "8405290c2ed382f3a52f6de87d21f3d7d8fc0e6530fe418ca75c3011757e6330";
const std::string kNerdctlId = "704c46ea013cc34b692aa5c19d55c122f93d2f2716692c29ee84599a8183e1e6";
const std::string kPodUid = "d82d336e-7e65-4d59-b9f9-0fa4f2bab5b8";
const std::string kPodUidSystemd = "d82d336e_7e65_4d59_b9f9_0fa4f2bab5b8";  // '_' for '-'
const std::string kStaticPodUid = "6b1a8f0e5c6d2f3e9a4b7c8d0e1f2a3b";       // a static pod's

// A cgroup v1 file as a Debian 11 host writes it, every controller at `path`, with the v2 line
// of a hybrid host when `unified` is given.
std::string v1_file(const std::string& path, const std::string& unified = "") {
  std::string text = "12:hugetlb:" + path + "\n11:memory:" + path + "\n10:blkio:" + path +
                     "\n9:pids:" + path + "\n8:cpuset:" + path + "\n7:freezer:" + path +
                     "\n6:net_cls,net_prio:" + path + "\n5:perf_event:" + path +
                     "\n4:devices:" + path + "\n3:cpu,cpuacct:" + path + "\n2:rdma:/\n" +
                     "1:name=systemd:" + path + "\n";
  if (!unified.empty()) text += "0::" + unified + "\n";
  return text;
}

std::string v2_file(const std::string& path) {
  return "0::" + path + "\n";
}

// SLURM's task/cgroup plugin on cgroup v1: only the controllers it manages are in the job's
// tree, the task level only in some; systemd's own hierarchies show slurmd's unit.
std::string slurm_v1_file(const std::string& step_path) {
  return "12:hugetlb:/\n11:memory:" + step_path +
         "/task_1\n10:blkio:/system.slice/slurmd.service\n" +
         "9:pids:/system.slice/slurmd.service\n8:cpuset:" + step_path + "\n7:freezer:" + step_path +
         "\n6:net_cls,net_prio:/\n5:perf_event:/\n4:devices:" + step_path +
         "/task_1\n3:cpu,cpuacct:/system.slice/slurmd.service\n2:rdma:/\n" +
         "1:name=systemd:/system.slice/slurmd.service\n0::/system.slice/slurmd.service\n";
}

struct CgroupCase {
  std::string name;
  std::string content;  // of /proc/PID/cgroup
  std::optional<std::string> path;
  std::optional<std::string> container_id;
  std::optional<std::string> container_runtime;
  std::optional<std::string> pod_uid;
  std::optional<std::string> pod_qos;
  std::optional<std::string> slurm_job_id;
  std::optional<std::string> slurm_step;
};

// One row of the table; the fields not given are expected absent.
CgroupCase row(std::string name, std::string content, std::optional<std::string> path,
               std::optional<std::string> container_id = std::nullopt,
               std::optional<std::string> container_runtime = std::nullopt,
               std::optional<std::string> pod_uid = std::nullopt,
               std::optional<std::string> pod_qos = std::nullopt) {
  return {std::move(name),
          std::move(content),
          std::move(path),
          std::move(container_id),
          std::move(container_runtime),
          std::move(pod_uid),
          std::move(pod_qos),
          std::nullopt,
          std::nullopt};
}

// The failure message names the case instead of printing its bytes.
void PrintTo(const CgroupCase& c, std::ostream* out) {
  *out << c.name;
}

std::string k8s_systemd(const std::string& qos, const std::string& container) {
  const std::string pod = "pod" + kPodUidSystemd;
  if (qos.empty()) return "/kubepods.slice/kubepods-" + pod + ".slice/" + container;
  return "/kubepods.slice/kubepods-" + qos + ".slice/kubepods-" + qos + "-" + pod + ".slice/" +
         container;
}

std::string k8s_cgroupfs(const std::string& qos, const std::string& container) {
  return "/kubepods/" + (qos.empty() ? "" : qos + "/") + "pod" + kPodUid + "/" + container;
}

std::vector<CgroupCase> cases() {
  std::vector<CgroupCase> all;
  // Docker, both drivers, v1 and v2.
  const std::string docker_fs = "/docker/" + kDockerId;
  const std::string docker_sd = "/system.slice/docker-" + kDockerId + ".scope";
  all.push_back(row("docker_cgroupfs_v1", v1_file(docker_fs), docker_fs, kDockerId, "docker"));
  all.push_back(row("docker_cgroupfs_v2", v2_file(docker_fs), docker_fs, kDockerId, "docker"));
  all.push_back(row("docker_systemd_v1", v1_file(docker_sd), docker_sd, kDockerId, "docker"));
  all.push_back(row("docker_systemd_v2", v2_file(docker_sd), docker_sd, kDockerId, "docker"));
  const std::string nested = docker_fs + "/docker/" + kInnerId;
  all.push_back(
      row("docker_in_docker_gives_the_outer", v2_file(nested), nested, kDockerId, "docker"));
  const std::string deleted = docker_sd + " (deleted)";
  all.push_back(row("docker_deleted_cgroup", v2_file(deleted), deleted, kDockerId, "docker"));

  // Podman: root, rootless, cgroupfs; its conmon monitor.
  const std::string podman_root = "/machine.slice/libpod-" + kPodmanId + ".scope/container";
  const std::string podman_rootless = "/user.slice/user-1000.slice/user@1000.service/user.slice/" +
                                      std::string("libpod-") + kPodmanId + ".scope/container";
  const std::string podman_fs = "/libpod_parent/libpod-" + kPodmanId;
  const std::string conmon = "/machine.slice/libpod-conmon-" + kPodmanId + ".scope";
  all.push_back(row("podman_root_v2", v2_file(podman_root), podman_root, kPodmanId, "podman"));
  all.push_back(
      row("podman_rootless_v2", v2_file(podman_rootless), podman_rootless, kPodmanId, "podman"));
  all.push_back(row("podman_cgroupfs_v1", v1_file(podman_fs), podman_fs, kPodmanId, "podman"));
  all.push_back(
      row("podman_conmon_is_no_container", v2_file(conmon), conmon, std::nullopt, "podman"));

  // Kubernetes, systemd driver: containerd and CRI-O in each QoS class, the Docker shim.
  for (const char* qos_level : {"burstable", "besteffort", ""}) {
    const std::string qos = qos_level;
    const std::string level = qos.empty() ? "guaranteed" : qos;
    const std::string containerd = k8s_systemd(qos, "cri-containerd-" + kContainerdId + ".scope");
    const std::string crio = k8s_systemd(qos, "crio-" + kCrioId + ".scope");
    all.push_back(row("k8s_systemd_containerd_" + level + "_v2", v2_file(containerd), containerd,
                      kContainerdId, "containerd", kPodUid, level));
    all.push_back(row("k8s_systemd_containerd_" + level + "_v1", v1_file(containerd), containerd,
                      kContainerdId, "containerd", kPodUid, level));
    all.push_back(row("k8s_systemd_crio_" + level + "_v2", v2_file(crio), crio, kCrioId, "cri-o",
                      kPodUid, level));
    // The kubelet's cgroupfs driver names no runtime.
    const std::string plain = k8s_cgroupfs(qos, kContainerdId);
    all.push_back(row("k8s_cgroupfs_" + level + "_v1", v1_file(plain), plain, kContainerdId,
                      "kubernetes", kPodUid, level));
    all.push_back(row("k8s_cgroupfs_" + level + "_v2", v2_file(plain), plain, kContainerdId,
                      "kubernetes", kPodUid, level));
  }
  const std::string crio_conmon = k8s_systemd("burstable", "crio-conmon-" + kCrioId + ".scope");
  all.push_back(row("k8s_crio_conmon_is_no_container", v2_file(crio_conmon), crio_conmon,
                    std::nullopt, "cri-o", kPodUid, "burstable"));
  const std::string crio_fs = k8s_cgroupfs("besteffort", "crio-" + kCrioId);
  all.push_back(row("k8s_cgroupfs_crio_v1", v1_file(crio_fs), crio_fs, kCrioId, "cri-o", kPodUid,
                    "besteffort"));
  const std::string shim = k8s_systemd("burstable", "docker-" + kDockerId + ".scope");
  all.push_back(
      row("k8s_docker_shim_v1", v1_file(shim), shim, kDockerId, "docker", kPodUid, "burstable"));
  // kind and k3s-in-docker nest the kubelet's tree under a cgroup root of /kubelet.
  const std::string kind =
      "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
      "kubelet-kubepods-besteffort-pod" +
      kPodUidSystemd + ".slice/cri-containerd-" + kContainerdId + ".scope";
  all.push_back(row("k8s_kind_nested_root", v2_file(kind), kind, kContainerdId, "containerd",
                    kPodUid, "besteffort"));
  // A static pod's UID is the MD5 of its manifest: 32 hex digits, no dashes, in either driver.
  const std::string static_sd = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                                kStaticPodUid + ".slice/cri-containerd-" + kContainerdId + ".scope";
  all.push_back(row("k8s_static_pod_systemd", v2_file(static_sd), static_sd, kContainerdId,
                    "containerd", kStaticPodUid, "burstable"));
  const std::string static_fs = "/kubepods/pod" + kStaticPodUid + "/" + kContainerdId;
  all.push_back(row("k8s_static_pod_cgroupfs", v1_file(static_fs), static_fs, kContainerdId,
                    "kubernetes", kStaticPodUid, "guaranteed"));
  // What is not a UID the kubelet writes: too short, grouped otherwise, or '_' where the
  // cgroupfs driver keeps the dashes. No pod; a runtime's unit is still its container.
  const std::string short_sd =
      "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podd82d336e7e65.slice/"
      "cri-containerd-" +
      kContainerdId + ".scope";
  all.push_back(row("k8s_pod_uid_too_short_systemd", v2_file(short_sd), short_sd, kContainerdId,
                    "containerd"));

  // containerd outside Kubernetes.
  const std::string nerdctl = "/system.slice/nerdctl-" + kNerdctlId + ".scope";
  all.push_back(row("nerdctl_v2", v2_file(nerdctl), nerdctl, kNerdctlId, "containerd"));

  // SLURM task/cgroup, v1 (the memory line wins over the step-level cpuset and freezer lines).
  const auto slurm = [&all](const std::string& name, const std::string& content,
                            const std::string& path, const std::string& job,
                            std::optional<std::string> step) {
    CgroupCase c = row(name, content, path);
    c.slurm_job_id = job;
    c.slurm_step = std::move(step);
    all.push_back(std::move(c));
  };
  slurm("slurm_v1_numeric_step", slurm_v1_file("/slurm/uid_1000/job_4242/step_0"),
        "/slurm/uid_1000/job_4242/step_0/task_1", "4242", "0");
  slurm("slurm_v1_batch_step", slurm_v1_file("/slurm/uid_1000/job_4243/step_batch"),
        "/slurm/uid_1000/job_4243/step_batch/task_1", "4243", "batch");
  slurm("slurm_v1_extern_step", slurm_v1_file("/slurm/uid_1000/job_4244/step_extern"),
        "/slurm/uid_1000/job_4244/step_extern/task_1", "4244", "extern");
  slurm("slurm_v1_under_node_prefix", v1_file("/slurm_node07/uid_0/job_5/step_0"),
        "/slurm_node07/uid_0/job_5/step_0", "5", "0");
  // v2.
  const std::string stepd = "/system.slice/slurmstepd.scope/job_4242";
  slurm("slurm_v2_numeric_step", v2_file(stepd + "/step_12/user/task_0"),
        stepd + "/step_12/user/task_0", "4242", "12");
  slurm("slurm_v2_batch_step", v2_file(stepd + "/step_batch/user/task_0"),
        stepd + "/step_batch/user/task_0", "4242", "batch");
  slurm("slurm_v2_extern_step", v2_file(stepd + "/step_extern/user/task_special"),
        stepd + "/step_extern/user/task_special", "4242", "extern");
  slurm("slurm_v2_interactive_step", v2_file(stepd + "/step_interactive/user/task_0"),
        stepd + "/step_interactive/user/task_0", "4242", "interactive");
  slurm("slurm_v2_stepd_itself", v2_file(stepd + "/step_0/slurm"), stepd + "/step_0/slurm", "4242",
        "0");
  slurm("slurm_unknown_step_word", v2_file(stepd + "/step_foo/user/task_0"),
        stepd + "/step_foo/user/task_0", "4242", std::nullopt);

  // Hybrid files: the line that identifies most, ties to the v2 line.
  all.push_back(
      row("hybrid_v1_and_v2_agree", v1_file(docker_sd, docker_sd), docker_sd, kDockerId, "docker"));
  all.push_back(row("hybrid_only_v2_recognised", v1_file("/user.slice", docker_sd), docker_sd,
                    kDockerId, "docker"));
  all.push_back(row("hybrid_only_v1_recognised", v1_file(docker_fs, "/system.slice/foo.service"),
                    docker_fs, kDockerId, "docker"));
  all.push_back(
      row("hybrid_tie_goes_to_v2", v1_file(docker_fs, docker_sd), docker_sd, kDockerId, "docker"));
  // Were any of the malformed lines taken, it would identify more than the good one.
  all.push_back(row("malformed_lines_are_skipped",
                    "garbage\n12:\nx:memory:/docker/" + kInnerId + "\n0:memory:/docker/" +
                        kInnerId + "\n5::/docker/" + kInnerId + "\n3:cpu:docker/" + kInnerId +
                        "\n" + v2_file("/init.scope"),
                    "/init.scope"));
  all.push_back(row("garbage_before_a_good_line", "garbage\n:::\n" + v2_file(docker_sd), docker_sd,
                    kDockerId, "docker"));

  // Unknown shapes: the path and nothing else.
  const auto unknown = [&all](const std::string& name, const std::string& content,
                              std::optional<std::string> path) {
    all.push_back(row(name, content, std::move(path)));
  };
  unknown("user_session", v2_file("/user.slice/user-1000.slice/session-3.scope"),
          "/user.slice/user-1000.slice/session-3.scope");
  unknown("init_scope", v2_file("/init.scope"), "/init.scope");
  unknown("root_v1", v1_file("/"), "/");
  unknown("root_v2", v2_file("/"), "/");
  unknown("docker_daemon", v2_file("/system.slice/docker.service"), "/system.slice/docker.service");
  unknown("docker_scope_not_hex", v2_file("/system.slice/docker-notanid0123456789.scope"),
          "/system.slice/docker-notanid0123456789.scope");
  unknown("docker_id_too_short", v2_file("/docker/cf3f95e1d2a"), "/docker/cf3f95e1d2a");
  unknown("bare_id_under_unknown_parent", v2_file("/mygroup/" + kDockerId),
          "/mygroup/" + kDockerId);
  unknown("pod_uid_not_hex", v2_file("/kubepods/burstable/podnot-a-uid/" + kContainerdId),
          "/kubepods/burstable/podnot-a-uid/" + kContainerdId);
  unknown("pod_uid_too_short", v2_file("/kubepods/burstable/pod0123456789ab/" + kContainerdId),
          "/kubepods/burstable/pod0123456789ab/" + kContainerdId);
  unknown("pod_uid_grouped_otherwise",
          v2_file("/kubepods/podd82d336e7e654d59-b9f9-0fa4-f2bab5b8/" + kContainerdId),
          "/kubepods/podd82d336e7e654d59-b9f9-0fa4-f2bab5b8/" + kContainerdId);
  unknown("pod_uid_underscores_under_cgroupfs",
          v2_file("/kubepods/burstable/pod" + kPodUidSystemd + "/" + kContainerdId),
          "/kubepods/burstable/pod" + kPodUidSystemd + "/" + kContainerdId);
  unknown("slurm_job_not_a_number", v2_file("/system.slice/slurmstepd.scope/job_x/step_0"),
          "/system.slice/slurmstepd.scope/job_x/step_0");
  unknown("job_folders_outside_slurm", v2_file("/batch/job_5/step_0"), "/batch/job_5/step_0");
  unknown("this_sandbox", "4:memory:/process_api/ebd95fdd41bb223444a40624ce42180f\n0::/\n", "/");
  unknown("empty", "", std::nullopt);
  unknown("garbage", "not a cgroup file\n\x01\x02:::\n:\n", std::nullopt);
  return all;
}

class CgroupTable : public ::testing::TestWithParam<CgroupCase> {};

TEST_P(CgroupTable, Identifies) {
  const CgroupCase& expected = GetParam();
  const CgroupIdentity identity = parse_proc_cgroup(expected.content);
  EXPECT_EQ(identity.path, expected.path);
  EXPECT_EQ(identity.container_id, expected.container_id);
  EXPECT_EQ(identity.container_runtime, expected.container_runtime);
  EXPECT_EQ(identity.pod_uid, expected.pod_uid);
  EXPECT_EQ(identity.pod_qos, expected.pod_qos);
  EXPECT_EQ(identity.slurm_job_id, expected.slurm_job_id);
  EXPECT_EQ(identity.slurm_step, expected.slurm_step);
}

std::string case_name(const ::testing::TestParamInfo<CgroupCase>& param) {
  return param.param.name;
}

INSTANTIATE_TEST_SUITE_P(ProcCgroup, CgroupTable, ::testing::ValuesIn(cases()), case_name);

TEST(CgroupPath, EmptyPathIsAbsent) {
  const CgroupIdentity identity = parse_cgroup_path("");
  EXPECT_FALSE(identity.path);
  EXPECT_FALSE(identity.container_id);
}

TEST(CgroupPath, PathIsKeptAsGiven) {
  const std::string path = "/kubepods.slice/kubepods-pod" + kPodUidSystemd + ".slice";
  const CgroupIdentity identity = parse_cgroup_path(path);
  EXPECT_EQ(identity.path, path);
  EXPECT_EQ(identity.pod_uid, kPodUid);  // the pod's own slice: a pod, no container
  EXPECT_EQ(identity.pod_qos, "guaranteed");
  EXPECT_FALSE(identity.container_id);
  EXPECT_FALSE(identity.container_runtime);
}

TEST(CgroupPath, QosWithoutPodIsAbsent) {
  const CgroupIdentity identity = parse_cgroup_path("/kubepods.slice/kubepods-burstable.slice");
  EXPECT_FALSE(identity.pod_qos);
  EXPECT_FALSE(identity.pod_uid);
}

TEST(CgroupPath, ShortIdsAreIds) {
  const CgroupIdentity identity = parse_cgroup_path("/docker/cf3f95e1d2ad");  // 12 hex digits
  EXPECT_EQ(identity.container_id, "cf3f95e1d2ad");
  EXPECT_EQ(identity.container_runtime, "docker");
}

TEST(CgroupPath, PodAndSlurmTogether) {
  // A SLURM step's tree under a pod (slurmd in Kubernetes, cgroup v1 inside the pod's tree).
  const std::string path =
      k8s_cgroupfs("burstable", kContainerdId) + "/slurm/uid_0/job_77/step_batch/task_0";
  const CgroupIdentity identity = parse_cgroup_path(path);
  EXPECT_EQ(identity.pod_uid, kPodUid);
  EXPECT_EQ(identity.container_id, kContainerdId);
  EXPECT_EQ(identity.slurm_job_id, "77");
  EXPECT_EQ(identity.slurm_step, "batch");
}

TEST(CgroupPath, SeenFromAnotherCgroupNamespace) {
  // The exporter's DaemonSet pod (hostPID, its own cgroup namespace on cgroup v2) reads a training
  // pod's /proc/PID/cgroup relative to its own root: the path climbs out with "..", and the pod
  // and the container are still the training pod's.
  const std::string seen =
      "/../../.." + k8s_systemd("burstable", "cri-containerd-" + kContainerdId + ".scope");
  const CgroupIdentity identity = parse_proc_cgroup(v2_file(seen));
  EXPECT_EQ(identity.path, seen);
  EXPECT_EQ(identity.pod_uid, kPodUid);
  EXPECT_EQ(identity.pod_qos, "burstable");
  EXPECT_EQ(identity.container_id, kContainerdId);
  EXPECT_EQ(identity.container_runtime, "containerd");
}

}  // namespace
}  // namespace gpuscope::processes
