// processes/process_identity: a pid resolved through a made-up /proc (odd commands, NULs, a
// launcher's environment, a container's cgroup), through the real one for this test process,
// and through what a vanished or unreadable process leaves: absent fields, never an exception.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include "processes/process_identity.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::processes {
namespace {

namespace fs = std::filesystem;
using gpuscope::testing::TempDir;

const std::string kDockerId = "cf3f95e1d2adb3154fc9653a14b8c0f3a35bde5e168a39a4b8c31ad7292f3849";

// Each string followed by a NUL, as /proc/PID/cmdline and /proc/PID/environ are.
std::string nul_terminated(std::initializer_list<std::string> items) {
  std::string block;
  for (const auto& item : items) {
    block += item;
    block.push_back('\0');
  }
  return block;
}

// A /proc/PID/stat line of a sleeping process, all 52 fields, as Linux 6.1 writes it.
std::string stat_line(unsigned pid, const std::string& comm, unsigned ppid,
                      std::uint64_t start_ticks) {
  return std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) + " " +
         std::to_string(pid) + " " + std::to_string(ppid) + " 34816 " + std::to_string(pid) +
         " 4194560 18324 0 12 0 1543 276 0 0 20 0 9 0 " + std::to_string(start_ticks) +
         " 2739916800 123456 18446744073709551615 94720000000000 94720000010000 140730000000000 0 "
         "0 0 16386 0 0 0 17 3 0 0 0 0 0 94720000020000 94720000030000 94720000040000 "
         "140730000001000 140730000001100 140730000001100 140730000002000 0\n";
}

// A made-up /proc in a temporary directory.
class FakeProc {
 public:
  const fs::path& root() const { return root_; }

  void write(unsigned pid, const std::string& name, const std::string& content) const {
    const fs::path dir = root_ / std::to_string(pid);
    fs::create_directories(dir);
    std::ofstream(dir / name, std::ios::binary) << content;
  }

  // A directory where /proc/PID/name should be a file: unreadable as one, whoever reads it
  // (root reads a file whatever its mode, so chmod would not do).
  void block(unsigned pid, const std::string& name) const {
    fs::create_directories(root_ / std::to_string(pid) / name);
  }

  void add_process(unsigned pid, unsigned ppid) const {
    write(pid, "stat", stat_line(pid, "sh", ppid, 1000 + pid));
  }

 private:
  TempDir dir_;
  fs::path root_ = dir_.path();
};

std::optional<std::string> user_of(uid_t uid) {
  const passwd* entry = getpwuid(uid);
  if (entry == nullptr) return std::nullopt;
  return std::string(entry->pw_name);
}

void expect_all_absent(const ProcessIdentity& who) {
  EXPECT_FALSE(who.command);
  EXPECT_FALSE(who.command_line);
  EXPECT_FALSE(who.uid);
  EXPECT_FALSE(who.user);
  EXPECT_FALSE(who.ppid);
  EXPECT_FALSE(who.start_ticks);
  EXPECT_FALSE(who.cgroup.path);
  EXPECT_FALSE(who.cgroup.container_id);
  EXPECT_FALSE(who.cgroup.container_runtime);
  EXPECT_FALSE(who.cgroup.slurm_job_id);
  EXPECT_FALSE(who.ranks.active());
  EXPECT_FALSE(who.ranks.job_id);
  EXPECT_FALSE(who.ranks.pod_name);
  EXPECT_FALSE(who.slurm_job_id);
}

TEST(ProcessIdentity, ResolvesEveryFieldOfAFakeProcess) {
  FakeProc proc;
  // comm may hold spaces and ')', which stat prints between its own parentheses.
  proc.write(4321, "stat", stat_line(4321, "tr ain) x", 77, 987654321));
  proc.write(4321, "comm", "tr ain) x\n");
  proc.write(4321, "cmdline", nul_terminated({"python3", "train.py", "--epochs", "3"}));
  // Real uid 0, effective 1000: the real one is the first.
  proc.write(4321, "status",
             "Name:\ttr ain) x\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4321\nPid:\t4321\n"
             "PPid:\t77\nTracerPid:\t0\nUid:\t0\t1000\t1000\t1000\nGid:\t0\t0\t0\t0\n");
  proc.write(4321, "cgroup", "0::/system.slice/docker-" + kDockerId + ".scope\n");
  proc.write(
      4321, "environ",
      nul_terminated({"PATH=/usr/bin:/bin", "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=8",
                      "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=4",
                      "OMPI_MCA_ess_base_jobid=2718", "POD_NAME=trainer-0", "POD_NAMESPACE=ml"}));

  const ProcessIdentity who = resolve_process(4321, proc.root());
  EXPECT_EQ(who.pid, 4321U);
  EXPECT_EQ(who.command, "tr ain) x");
  EXPECT_EQ(who.command_line, "python3 train.py --epochs 3");
  EXPECT_EQ(who.uid, 0U);
  EXPECT_EQ(who.user, user_of(0));
  EXPECT_EQ(who.ppid, 77U);
  EXPECT_EQ(who.start_ticks, 987654321U);
  EXPECT_EQ(who.cgroup.container_id, kDockerId);
  EXPECT_EQ(who.cgroup.container_runtime, "docker");
  EXPECT_EQ(who.ranks.launcher, "openmpi");
  EXPECT_EQ(who.ranks.rank, 3);
  EXPECT_EQ(who.ranks.world_size, 8);
  EXPECT_EQ(who.ranks.local_rank, 1);
  EXPECT_EQ(who.ranks.local_world_size, 4);
  EXPECT_EQ(who.ranks.job_id, "2718");
  EXPECT_EQ(who.ranks.pod_name, "trainer-0");
  EXPECT_EQ(who.ranks.pod_namespace, "ml");
  EXPECT_FALSE(who.slurm_job_id);
}

TEST(ProcessIdentity, AVanishedPidHasOnlyItsPid) {
  FakeProc proc;
  ProcessIdentity who;
  EXPECT_NO_THROW(who = resolve_process(4242, proc.root()));
  EXPECT_EQ(who.pid, 4242U);
  expect_all_absent(who);
  EXPECT_NO_THROW(who = resolve_process(4242, proc.root() / "no-such-proc"));
  expect_all_absent(who);
}

TEST(ProcessIdentity, UnreadableFilesAreAbsent) {
  FakeProc proc;
  for (const char* name : {"stat", "comm", "cmdline", "status", "cgroup", "environ"}) {
    proc.block(99, name);
  }
  ProcessIdentity who;
  EXPECT_NO_THROW(who = resolve_process(99, proc.root()));
  EXPECT_EQ(who.pid, 99U);
  expect_all_absent(who);
}

TEST(ProcessIdentity, MalformedFilesAreAbsentFieldByField) {
  FakeProc proc;
  proc.write(5, "stat", "5 no parentheses S 1 5 5\n");
  proc.write(5, "comm", "worker\n");
  proc.write(5, "status", "Name:\tworker\nUid:\tx\t0\t0\t0\n");
  proc.write(5, "cgroup", "garbage\n");
  proc.write(5, "environ", std::string("no equals sign\0=nameless\0", 25));
  const ProcessIdentity who = resolve_process(5, proc.root());
  EXPECT_EQ(who.command, "worker");
  EXPECT_FALSE(who.ppid);
  EXPECT_FALSE(who.start_ticks);
  EXPECT_FALSE(who.uid);
  EXPECT_FALSE(who.user);
  EXPECT_FALSE(who.cgroup.path);
  EXPECT_FALSE(who.ranks.active());
  // A stat cut short after ppid still gives ppid.
  proc.write(6, "stat", "6 (a) b) S 42 6\n");
  const ProcessIdentity short_stat = resolve_process(6, proc.root());
  EXPECT_EQ(short_stat.ppid, 42U);
  EXPECT_FALSE(short_stat.start_ticks);
}

TEST(ProcessIdentity, AKernelThreadHasNoCommandLine) {
  FakeProc proc;
  proc.write(2, "comm", "kthreadd\n");
  proc.write(2, "cmdline", "");
  const ProcessIdentity who = resolve_process(2, proc.root());
  EXPECT_EQ(who.command, "kthreadd");
  EXPECT_FALSE(who.command_line);
}

TEST(ProcessIdentity, SlurmJobFromEnvironThenCgroup) {
  FakeProc proc;
  proc.write(7, "cgroup", "0::/system.slice/slurmstepd.scope/job_999/step_0/user/task_0\n");
  proc.write(7, "environ", nul_terminated({"SLURM_JOB_ID=4242", "SLURM_PROCID=1"}));
  const ProcessIdentity with_env = resolve_process(7, proc.root());
  EXPECT_EQ(with_env.slurm_job_id, "4242");
  EXPECT_EQ(with_env.cgroup.slurm_job_id, "999");
  EXPECT_EQ(with_env.ranks.launcher, "slurm");
  EXPECT_EQ(with_env.ranks.rank, 1);

  proc.write(8, "cgroup", "0::/system.slice/slurmstepd.scope/job_999/step_0/user/task_0\n");
  proc.block(8, "environ");  // another user's process, read by someone not root
  const ProcessIdentity from_cgroup = resolve_process(8, proc.root());
  EXPECT_EQ(from_cgroup.slurm_job_id, "999");
  EXPECT_EQ(from_cgroup.cgroup.slurm_step, "0");
  EXPECT_FALSE(from_cgroup.ranks.active());

  proc.write(9, "environ", nul_terminated({"SLURM_JOB_ID="}));  // set but empty: no job
  EXPECT_FALSE(resolve_process(9, proc.root()).slurm_job_id);
}

TEST(ProcessIdentity, PodUidsAreUuidsInEitherDriver) {
  const std::string container = "68b261df10c564fa59492dbb5ceafdabbfdca0eb4a9c056afe193e7a2013101b";
  FakeProc proc;
  // The kubelet's systemd driver: the UID's dashes become '_' in the slice's name.
  proc.write(11, "cgroup",
             "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-"
             "pod1b2c3d4e_5f60_4718_9a2b_3c4d5e6f7a8b.slice/cri-containerd-" +
                 container + ".scope\n");
  // Its cgroupfs driver: the UID as it is.
  proc.write(12, "cgroup",
             "0::/kubepods/besteffort/pod1b2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8b/" + container + "\n");
  // Twelve hex digits are no UID, in either form.
  proc.write(13, "cgroup",
             "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e5f60.slice/"
             "cri-containerd-" +
                 container + ".scope\n");
  proc.write(14, "cgroup", "0::/kubepods/besteffort/pod1b2c3d4e5f60/" + container + "\n");
  const ProcessIdentity systemd = resolve_process(11, proc.root());
  EXPECT_EQ(systemd.cgroup.pod_uid, "1b2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8b");
  EXPECT_EQ(systemd.cgroup.pod_qos, "burstable");
  const ProcessIdentity cgroupfs = resolve_process(12, proc.root());
  EXPECT_EQ(cgroupfs.cgroup.pod_uid, "1b2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8b");
  EXPECT_EQ(cgroupfs.cgroup.container_runtime, "kubernetes");
  const ProcessIdentity short_systemd = resolve_process(13, proc.root());
  EXPECT_FALSE(short_systemd.cgroup.pod_uid);
  EXPECT_FALSE(short_systemd.cgroup.pod_qos);
  EXPECT_EQ(short_systemd.cgroup.container_id, container);  // the runtime's unit says so
  const ProcessIdentity short_cgroupfs = resolve_process(14, proc.root());
  EXPECT_FALSE(short_cgroupfs.cgroup.pod_uid);
  EXPECT_FALSE(short_cgroupfs.cgroup.container_id);  // a bare id under no pod: whose is unknown
}

TEST(ProcessIdentity, LongCommandLinesAreCutOnACharacterBoundary) {
  const std::string ellipsis = "\xE2\x80\xA6";
  FakeProc proc;
  const auto command_line = [&proc](const std::string& cmdline) {
    proc.write(10, "cmdline", cmdline);
    return resolve_process(10, proc.root()).command_line.value_or("(absent)");
  };
  EXPECT_EQ(command_line(std::string(512, 'a') + '\0'), std::string(512, 'a'));
  EXPECT_EQ(command_line(std::string(513, 'a')), std::string(509, 'a') + ellipsis);
  // "é" (2 bytes) at bytes 508-509: the cut at 509 would split it, so it goes whole.
  EXPECT_EQ(command_line(std::string(508, 'a') + "\xC3\xA9" + std::string(100, 'b')),
            std::string(508, 'a') + ellipsis);
  // A 4-byte character at bytes 507-510.
  EXPECT_EQ(command_line(std::string(507, 'a') + "\xF0\x9F\x98\x80" + std::string(100, 'b')),
            std::string(507, 'a') + ellipsis);
  // A NUL-separated line is joined before it is cut.
  const std::string args = nul_terminated({std::string(300, 'x'), std::string(300, 'y')});
  EXPECT_EQ(command_line(args), std::string(300, 'x') + " " + std::string(208, 'y') + ellipsis);
}

TEST(ProcessIdentity, EnvironmentFromBlock) {
  const util::EnvLookup env = environment_from_block(
      nul_terminated({"A=1", "EMPTY=", "B=x=y", "A=2", "junk", "=nameless", "LAST=z"}));
  EXPECT_EQ(env("A"), "1");  // the first of a name given twice, as getenv finds it
  EXPECT_EQ(env("EMPTY"), "");
  EXPECT_EQ(env("B"), "x=y");
  EXPECT_EQ(env("LAST"), "z");
  EXPECT_FALSE(env("junk"));
  EXPECT_FALSE(env(""));
  EXPECT_FALSE(env("MISSING"));
  // No NUL after the last entry (a block cut short) still gives it.
  EXPECT_EQ(environment_from_block("X=1")("X"), "1");
  EXPECT_FALSE(environment_from_block("")("X"));
}

TEST(ProcessIdentity, DescendsFromWalksParentLinks) {
  FakeProc proc;
  proc.add_process(1, 0);
  proc.add_process(200, 1);
  proc.add_process(300, 200);
  proc.add_process(400, 300);
  proc.add_process(500, 999);  // its parent is gone
  proc.add_process(600, 601);  // a loop, as a pid reused between two reads could make
  proc.add_process(601, 600);
  EXPECT_TRUE(descends_from(400, 400, proc.root()));
  EXPECT_TRUE(descends_from(400, 300, proc.root()));
  EXPECT_TRUE(descends_from(400, 200, proc.root()));
  EXPECT_TRUE(descends_from(400, 1, proc.root()));
  EXPECT_FALSE(descends_from(200, 400, proc.root()));
  EXPECT_FALSE(descends_from(500, 1, proc.root()));
  EXPECT_FALSE(descends_from(600, 1, proc.root()));
  EXPECT_FALSE(descends_from(700, 1, proc.root()));  // vanished
  proc.block(800, "stat");
  EXPECT_FALSE(descends_from(800, 1, proc.root()));
}

TEST(ProcessIdentity, DescendsFromStopsAfter256Links) {
  FakeProc proc;
  proc.add_process(1000, 1);
  for (unsigned pid = 1001; pid < 1300; ++pid) proc.add_process(pid, pid - 1);
  EXPECT_TRUE(descends_from(1299, 1299 - 256, proc.root()));
  EXPECT_FALSE(descends_from(1299, 1299 - 257, proc.root()));
  EXPECT_FALSE(descends_from(1299, 1, proc.root()));
}

TEST(ProcessIdentity, ThisProcessThroughTheRealProc) {
  const auto self = static_cast<unsigned>(getpid());
  const auto parent = static_cast<unsigned>(getppid());
  const ProcessIdentity who = resolve_process(self);
  std::array<char, 17> name{};  // the kernel's own word for comm, not read from /proc
  ASSERT_EQ(prctl(PR_GET_NAME, name.data(), 0, 0, 0), 0);
  EXPECT_EQ(who.command, std::string(name.data()));
  EXPECT_TRUE(who.command_line);
  EXPECT_EQ(who.uid, static_cast<unsigned>(getuid()));
  EXPECT_EQ(who.user, user_of(getuid()));
  EXPECT_EQ(who.ppid, parent);
  EXPECT_TRUE(who.start_ticks);
  EXPECT_TRUE(who.cgroup.path);
  EXPECT_TRUE(descends_from(self, parent));
  EXPECT_TRUE(descends_from(self, self));
  EXPECT_FALSE(descends_from(parent, self));
}

}  // namespace
}  // namespace gpuscope::processes
