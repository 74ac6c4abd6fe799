// Which processes use each GPU: a look at NVML's running compute processes (and their
// utilization, where the driver gives it) about once a second, each new process resolved once
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

#include "collect/node_gpus.hpp"
#include "core/device_description.hpp"
#include "core/gpu_process.hpp"
#include "core/run.hpp"
#include "nvml/device.hpp"
#include "nvml/session.hpp"

namespace gpuscope::amd {
class Session;  // amd/session.hpp, opened by collect/node_gpus
}

namespace gpuscope::app {

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

// A device whose processes are looked at, and the device_index its rows get: a GPU's NVML
// index, or a MIG device's row index (core/mig.hpp) for a MIG device's handle, whose process
// list holds the processes of its instance only (and answers unprivileged, where its GPU's
// refuses: docs/mig.md).
struct WatchedDevice {
  std::optional<nvml::Device> device;  // an NVIDIA GPU or MIG device
  unsigned row_index = 0;
  collect::ProcessLister amd;  // an AMD GPU (docs/amd.md): its library's process list
};

// The devices whose process lists to look at when `sampled` (GPUs and MIG devices) are sampled:
// each MIG device's own list (its instance's processes with its row index, which its GPU's list
// refuses to an unprivileged user), and each GPU without sampled MIG devices. A device that
// cannot be opened is left out. An AMD GPU's list comes from `amd`'s library (AMD SMI; ROCm SMI
// has none gpuscope uses). Either session may be null when no device of its vendor is sampled.
std::vector<WatchedDevice> devices_to_watch(const nvml::Session* nvml, const amd::Session* amd,
                                            const std::vector<DeviceDescription>& sampled);

class ProcessWatch {
 public:
  using ProcessFn = std::function<void(const GpuProcess&)>;
  using SampleFn = std::function<void(const ProcessSample&)>;

  // `devices` are the GPUs to look at (their index() is the device_index of the rows).
  // on_process gets each process once, when first seen; on_sample each process on each GPU at
  // each look. Either may be empty.
  ProcessWatch(std::vector<nvml::Device> devices, ProcessWatchOptions options,
               ProcessFn on_process = {}, SampleFn on_sample = {});
  // The same for devices with row indices of their own (MIG devices among them).
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
  std::map<unsigned, std::uint64_t> last_utilization_us_;  // per device: the newest sample seen

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

}  // namespace gpuscope::app
