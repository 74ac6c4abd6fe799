#include "collect/process_watch.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <string_view>

#include "core/clock.hpp"
#include "processes/process_identity.hpp"

namespace gpuscope::collect {

GpuProcess describe_process(unsigned pid, const std::optional<JobIdentity>& job,
                            const std::filesystem::path& proc_root) {
  GpuProcess out;
  out.pid = pid;
  processes::ProcessIdentity who;
  try {
    who = processes::resolve_process(pid, proc_root);
  } catch (...) {
    return out;  // resolve_process does not throw; a bad_alloc must not stop the sampling
  }
  out.start_ticks = who.start_ticks;
  out.command = who.command;
  out.command_line = who.command_line;
  out.uid = who.uid;
  out.user = who.user;
  out.ppid = who.ppid;
  out.cgroup = who.cgroup.path;
  out.container_id = who.cgroup.container_id;
  out.container_runtime = who.cgroup.container_runtime;
  out.pod_uid = who.cgroup.pod_uid;
  out.pod_name = who.ranks.pod_name;
  out.pod_namespace = who.ranks.pod_namespace;
  out.slurm_job_id = who.slurm_job_id;
  out.slurm_step = who.cgroup.slurm_step;
  out.launcher = who.ranks.launcher;
  out.rank = who.ranks.rank;
  out.local_rank = who.ranks.local_rank;
  // A pid /proc does not show (it ended, or it lives in another pid namespace: NVML reports host
  // pids, which a containerised gpuscope cannot see) cannot be told to be the job's or not.
  const bool resolved = who.start_ticks.has_value() || who.command.has_value();
  if (job && resolved) {
    bool in_job = job->job_pid > 0 &&
                  processes::descends_from(pid, static_cast<unsigned>(job->job_pid), proc_root);
    if (!in_job && job->slurm_job_id && out.slurm_job_id == job->slurm_job_id) in_job = true;
    if (!in_job && job->launcher_job_id && who.ranks.job_id == job->launcher_job_id) {
      in_job = true;
    }
    if (!in_job && out.container_id && job->job_pid > 0) {
      const auto job_pid = static_cast<unsigned>(job->job_pid);
      const auto job_start = processes::start_ticks(job_pid, proc_root);
      in_job = job_start && who.start_ticks && *who.start_ticks >= *job_start &&
               runs_container_client(job_pid, proc_root);
    }
    out.in_job = in_job;
  }
  return out;
}

bool runs_container_client(unsigned ancestor, const std::filesystem::path& proc_root) {
  static constexpr std::string_view kClients[] = {"podman", "docker", "nerdctl", "ctr", "crictl"};
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream comm_file(entry.path() / "comm");
    std::string comm;
    if (!std::getline(comm_file, comm)) continue;
    if (std::find(std::begin(kClients), std::end(kClients), comm) == std::end(kClients)) continue;
    unsigned pid = 0;
    if (std::from_chars(name.data(), name.data() + name.size(), pid).ec != std::errc()) continue;
    if (processes::descends_from(pid, ancestor, proc_root)) return true;
  }
  return false;
}

ProcessWatch::ProcessWatch(std::vector<WatchedDevice> devices, ProcessWatchOptions options,
                           ProcessFn on_process, SampleFn on_sample)
    : devices_(std::move(devices)),
      options_(std::move(options)),
      on_process_(std::move(on_process)),
      on_sample_(std::move(on_sample)) {}

ProcessWatch::~ProcessWatch() {
  stop();
}

void ProcessWatch::set_job(JobIdentity job) {
  std::lock_guard lock(mutex_);
  job_ = std::move(job);
}

const GpuProcess& ProcessWatch::resolve(unsigned pid, std::int64_t wall_ns, std::int64_t mono_ns) {
  // The start time tells a reused pid apart; reading it is one small file.
  const std::uint64_t ticks = processes::start_ticks(pid, options_.proc_root).value_or(0);
  auto key = std::make_pair(pid, ticks);
  if (auto it = known_.find(key); it != known_.end()) return it->second;
  if (ticks == 0) {
    // Gone from /proc (it ended since the driver listed it, as a job's process does at the
    // end): the process already known by that pid, if any, the most recently started.
    auto it = known_.lower_bound({pid + 1, 0});
    if (it != known_.begin() && std::prev(it)->first.first == pid) return std::prev(it)->second;
  }
  GpuProcess process;
  if (known_.size() < options_.max_processes) {
    process = describe_process(pid, job_, options_.proc_root);
  } else {
    process.pid = pid;
  }
  if (ticks != 0) process.start_ticks = ticks;
  process.first_wall_ns = wall_ns;
  process.first_mono_ns = mono_ns;
  auto [it, inserted] = known_.emplace(key, std::move(process));
  if (inserted && on_process_) on_process_(it->second);
  return it->second;
}

void ProcessWatch::look() {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<ProcessSample, GpuProcess>> seen;
  for (const WatchedDevice& watched : devices_) {
    const auto processes = watched.list();
    if (!processes) continue;
    const std::int64_t wall_ns = wall_now_ns();
    const std::int64_t mono_ns = mono_now_ns();
    for (const auto& p : *processes) {
      ProcessSample sample;
      sample.device_index = watched.row_index;
      sample.wall_ns = wall_ns;
      sample.mono_ns = mono_ns;
      sample.pid = p.pid;
      sample.used_memory_bytes = p.used_memory_bytes;
      sample.sm_percent = p.sm_percent;
      sample.memory_percent = p.memory_percent;
      const GpuProcess& process = resolve(p.pid, wall_ns, mono_ns);
      if (on_sample_) on_sample_(sample);
      seen.emplace_back(sample, process);
    }
  }
  latest_ = std::move(seen);
  ++looks_;
}

void ProcessWatch::start() {
  if (thread_.joinable() || options_.interval.count() <= 0) return;
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void ProcessWatch::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  look();  // the last look, after the job
}

void ProcessWatch::loop() {
  std::unique_lock lock(wake_mutex_);
  while (!stopping_) {
    lock.unlock();
    look();
    lock.lock();
    wake_.wait_for(lock, options_.interval, [this] { return stopping_; });
  }
}

std::vector<std::pair<ProcessSample, GpuProcess>> ProcessWatch::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

std::uint64_t ProcessWatch::looks() const {
  std::lock_guard lock(mutex_);
  return looks_;
}

std::size_t ProcessWatch::processes_seen() const {
  std::lock_guard lock(mutex_);
  return known_.size();
}

}  // namespace gpuscope::collect
