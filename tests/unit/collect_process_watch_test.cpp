// Which processes use each GPU, driven without the command line: the simulated driver reports
// the pids a test names (GPUSCOPE_SIM_PROCESSES_FILE) and ProcessWatch resolves them through a
// made-up /proc, where the job's descendants, a process of the same SLURM job, a stranger's
// process, a pid /proc does not show and a reused pid are laid out by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "collect/nvidia_gpus.hpp"
#include "collect/process_watch.hpp"
#include "nvml/library.hpp"
#include "nvml/session.hpp"
#include "support/programs.hpp"
#include "support/temp_dir.hpp"
#include "unit/sim_env.hpp"

namespace gpuscope::collect {
namespace {

using testing::SimEnvironment;
using testing::TempDir;
namespace fs = std::filesystem;
using namespace std::string_literals;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// /proc/PID/{stat,comm,cgroup,environ} as Linux writes them.
void add_process(const fs::path& proc, unsigned pid, unsigned ppid, const std::string& comm,
                 std::uint64_t start_ticks, const std::string& environ = {},
                 const std::string& cgroup = "0::/\n") {
  const fs::path dir = proc / std::to_string(pid);
  std::string stat = std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid);
  for (int field = 5; field <= 21; ++field) stat += " 0";
  stat += " " + std::to_string(start_ticks) + " 0 0\n";
  write(dir / "stat", stat);
  write(dir / "comm", comm + "\n");
  write(dir / "cgroup", cgroup);
  write(dir / "environ", environ);
  write(dir / "status", "Name:\t" + comm + "\nUid:\t0\t0\t0\t0\n");
}

struct Fixture {
  Fixture()
      : env(SimEnvironment::fixture("export-steady")),
        session(nvml::Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true})) {
    setenv("GPUSCOPE_SIM_PROCESSES_FILE", processes_file().c_str(), 1);
    proc = fs::path(dir.path()) / "proc";
    add_process(proc, 100, 1, "launcher", 1000);  // the job
    add_process(proc, 101, 100, "python", 1001);  // the job's child
    add_process(proc, 200, 1, "python", 1002, "SLURM_JOB_ID=55\0RANK=1\0WORLD_SIZE=2\0"s);
    add_process(proc, 300, 1, "stranger", 1003);       // someone else's
    list("0 101 100\n0 200 10\n0 300 20\n0 400 5\n");  // 400: not in /proc
  }
  ~Fixture() { unsetenv("GPUSCOPE_SIM_PROCESSES_FILE"); }

  std::string processes_file() const { return dir.file("processes.txt"); }
  void list(const std::string& lines) const { write(processes_file(), lines); }

  ProcessWatch watch(ProcessWatchOptions options = {}) {
    options.proc_root = proc;
    std::vector<WatchedDevice> devices{{0, nvidia_process_lister(session.device(0))}};
    return ProcessWatch(
        devices, options, [this](const GpuProcess& p) { seen[p.pid] = p; },
        [this](const ProcessSample& s) { ++samples[s.pid]; });
  }

  TempDir dir;
  SimEnvironment env;
  nvml::Session session;
  fs::path proc;
  std::map<unsigned, GpuProcess> seen;
  std::map<unsigned, int> samples;
};

TEST(ProcessWatch, TellsTheJobsProcessesFromOthers) {
  Fixture f;
  ProcessWatch watch = f.watch();
  watch.set_job({100, std::string("55"), std::nullopt});
  watch.look();
  ASSERT_EQ(f.seen.size(), 4U);
  EXPECT_EQ(f.seen[101].in_job, true);  // a descendant of the job
  EXPECT_EQ(f.seen[101].command, "python");
  EXPECT_EQ(f.seen[101].ppid, 100U);
  EXPECT_EQ(f.seen[200].in_job, true);  // the same SLURM job (another rank)
  EXPECT_EQ(f.seen[200].slurm_job_id, "55");
  EXPECT_EQ(f.seen[200].rank, 1);
  EXPECT_EQ(f.seen[300].in_job, false);          // someone else on the GPU
  EXPECT_FALSE(f.seen[400].in_job.has_value());  // /proc does not show it: unknown
  EXPECT_FALSE(f.seen[400].command.has_value());
  EXPECT_EQ(f.samples[400], 1);
  const auto latest = watch.latest();
  ASSERT_EQ(latest.size(), 4U);
  EXPECT_EQ(latest[0].first.used_memory_bytes, 100ULL << 20);
  EXPECT_EQ(watch.looks(), 1U);
}

TEST(ProcessWatch, ResolvesEachProcessOnceAndAReusedPidAgain) {
  Fixture f;
  ProcessWatch watch = f.watch();
  watch.look();
  watch.look();
  EXPECT_EQ(f.seen.size(), 4U);
  EXPECT_EQ(watch.processes_seen(), 4U);
  EXPECT_EQ(f.samples[300], 2);
  // Pid 300 ends and the kernel gives its number to a new process.
  add_process(f.proc, 300, 1, "newcomer", 9999);
  watch.look();
  EXPECT_EQ(watch.processes_seen(), 5U);
  EXPECT_EQ(f.seen[300].command, "newcomer");
  EXPECT_EQ(f.seen[300].start_ticks, 9999U);
}

TEST(ProcessWatch, AProcessThatEndsIsNotANewOne) {
  // The job's last process still listed by the driver after it left /proc (the look after the
  // job ends): the same process, not a second row without identity.
  Fixture f;
  ProcessWatch watch = f.watch();
  watch.look();
  fs::remove_all(f.proc / "101");
  watch.look();
  EXPECT_EQ(watch.processes_seen(), 4U);
  EXPECT_EQ(f.samples[101], 2);
  EXPECT_EQ(f.seen[101].command, "python");
}

TEST(ProcessWatch, AContainerTheJobStartedIsTheJobs) {
  // podman run's container is a child of conmon, not of the job: it is the job's when it started
  // after the job while the job runs a container client; an older container is not.
  Fixture f;
  const std::string podman_cgroup = "0::/machine.slice/libpod-" + std::string(64, 'a') + ".scope\n";
  add_process(f.proc, 102, 100, "podman", 1001);
  add_process(f.proc, 500, 1, "python", 1500, {}, podman_cgroup);  // started after the job
  add_process(f.proc, 600, 1, "python", 500, {}, podman_cgroup);   // running before it
  f.list("0 500 10\n0 600 10\n");
  ProcessWatch watch = f.watch();
  watch.set_job({100, std::nullopt, std::nullopt});
  watch.look();
  EXPECT_EQ(f.seen[500].container_runtime, "podman");
  EXPECT_EQ(f.seen[500].in_job, true);
  EXPECT_EQ(f.seen[600].in_job, false);
  EXPECT_TRUE(runs_container_client(100, f.proc));
  EXPECT_FALSE(runs_container_client(300, f.proc));
}

TEST(ProcessWatch, WithoutAJobNothingIsJudged) {
  Fixture f;
  ProcessWatch watch = f.watch();
  watch.look();
  for (const auto& [pid, process] : f.seen) EXPECT_FALSE(process.in_job.has_value()) << pid;
}

TEST(ProcessWatch, ResolvesAtMostMaxProcesses) {
  Fixture f;
  ProcessWatchOptions options;
  options.max_processes = 2;
  ProcessWatch watch = f.watch(options);
  watch.look();
  EXPECT_EQ(f.seen.size(), 4U);  // every process is still sampled and recorded
  int resolved = 0;
  for (const auto& [pid, process] : f.seen) resolved += process.command.has_value() ? 1 : 0;
  EXPECT_EQ(resolved, 2);
}

TEST(ProcessWatch, LooksOnItsOwnThreadUntilStopped) {
  Fixture f;
  ProcessWatchOptions options;
  options.interval = std::chrono::milliseconds(20);
  ProcessWatch watch = f.watch(options);
  watch.start();
  // However loaded the machine, the thread looks again and again; then stop() takes one last look.
  EXPECT_TRUE(
      gpuscope::testing::eventually([&] { return watch.looks() >= 3; }, std::chrono::seconds(60)));
  const auto before = watch.looks();
  watch.stop();
  const auto looks = watch.looks();
  EXPECT_GE(looks, before + 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(watch.looks(), looks);  // stopped means stopped (a late look would show here)
}

TEST(ProcessWatch, AnEmptyOrGarbledListIsNoProcess) {
  Fixture f;
  f.list("# nothing\nnot a line\n0\n0 0 5\n7 300\n");  // pid 0, GPU 7 (no such GPU): ignored
  ProcessWatch watch = f.watch();
  watch.look();
  EXPECT_TRUE(f.seen.empty());
  EXPECT_TRUE(watch.latest().empty());
}

}  // namespace
}  // namespace gpuscope::collect
