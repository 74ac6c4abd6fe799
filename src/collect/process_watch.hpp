// Which processes use each GPU: a look at each device's process list (collect/gpu_vendor.hpp:
// NVML's running compute processes and their utilization where the driver gives it, AMD SMI's
// processes and their graphics time) about once a second, each new process resolved once
// through /proc to its command, user, container, pod, SLURM job and rank (processes/), and told
// apart as the profiled job's or not. `profile` stores what it sees (docs/processes.md); `serve`
// asks for the latest look at each scrape.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collect/gpu_vendor.hpp"
#include "core/device_description.hpp"
#include "core/gpu_process.hpp"
#include "core/run.hpp"

namespace gpuscope::collect {

// What makes a process the profiled job's: being the job or a descendant of it, or carrying the
// same SLURM job id or launcher job id as gpuscope itself (the other ranks of an mpirun, whose
// parent is mpirun's daemon, not this gpuscope).
// A container's processes are children of the runtime's monitor (conmon, containerd-shim), not
// of the `podman run` / `docker run` client the job ran: a process in a container that started
// after the job did, while the job runs a container client, is the job's too.
struct JobIdentity {
  pid_t job_pid = -1;
  std::optional<std::string> slurm_job_id;
  std::optional<std::string> launcher_job_id;
};

// Whether one of `ancestor`'s descendants (or itself) is a container client: podman, docker,
// nerdctl, ctr, crictl. Reads /proc/*/comm and stat; never throws.
bool runs_container_client(unsigned ancestor, const std::filesystem::path& proc_root = "/proc");

struct ProcessWatchOptions {
  std::chrono::milliseconds interval{1000};
  std::filesystem::path proc_root = "/proc";  // tests: a made-up /proc
  // The most processes resolved per run; past it new pids are sampled but not resolved (a fork
  // storm on a shared GPU must not make gpuscope read /proc forever).
  std::size_t max_processes = 4096;
};

class ProcessWatch {
 public:
  using ProcessFn = std::function<void(const GpuProcess&)>;
  using SampleFn = std::function<void(const ProcessSample&)>;

  // `devices` are the devices to look at, each with the device_index of its rows
  // (node_gpus.hpp: watched_devices). on_process gets each process once, when first
  // seen; on_sample each process on each device at each look. Either may be empty.
  ProcessWatch(std::vector<WatchedDevice> devices, ProcessWatchOptions options,
               ProcessFn on_process = {}, SampleFn on_sample = {});
  ~ProcessWatch();
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  // Sets the job whose processes count as in_job (before start(); without it in_job is absent).
  void set_job(JobIdentity job);

  // One look now, on the calling thread. Never throws for what the driver or /proc say: a GPU
  // that fails is skipped until the next look; a vanished pid is kept with absent fields.
  void look();
  // Looks every options.interval on a thread of its own until stop() (or destruction); one
  // last look is taken when stopping, so a short job is seen at least once or twice.
  void start();
  void stop();

  // The latest look (copies; safe from any thread).
  std::vector<std::pair<ProcessSample, GpuProcess>> latest() const;
  // How many distinct processes were seen.
  std::size_t processes_seen() const;
  // How many looks were taken (changes with every look).
  std::uint64_t looks() const;

 private:
  const GpuProcess& resolve(unsigned pid, std::int64_t wall_ns, std::int64_t mono_ns);
  void loop();

  std::vector<WatchedDevice> devices_;
  ProcessWatchOptions options_;
  ProcessFn on_process_;
  SampleFn on_sample_;
  std::optional<JobIdentity> job_;

  mutable std::mutex mutex_;  // guards known_, latest_; held across one look
  // Processes by pid and start time (a reused pid is another process).
  std::map<std::pair<unsigned, std::uint64_t>, GpuProcess> known_;
  std::vector<std::pair<ProcessSample, GpuProcess>> latest_;
  std::uint64_t looks_ = 0;

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

// The pid's identity as a GpuProcess, resolved through /proc (processes/): what profile stores
// and serve labels with. `job` decides in_job. Never throws.
GpuProcess describe_process(unsigned pid, const std::optional<JobIdentity>& job,
                            const std::filesystem::path& proc_root = "/proc");

}  // namespace gpuscope::collect
