#include "app/profile/profile_run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "app/profile/kernel_tracing.hpp"
#include "app/profile/profile_live.hpp"
#include "app/profile/profiled_run.hpp"
#include "app/profile/progress.hpp"
#include "app/profile/run_context.hpp"
#include "app/profile/run_sink.hpp"
#include "collect/describe.hpp"
#include "collect/gpu_selection.hpp"
#include "collect/node_gpus.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "launch/job.hpp"
#include "launch/signals.hpp"
#include "phases/output_phases.hpp"
#include "ranks/output_path.hpp"
#include "ranks/rank_context.hpp"
#include "store/run_file.hpp"

namespace gpuscope::app {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

std::string local_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y%m%d-%H%M%S", &local);
  return buffer;
}

launch::LaunchOptions launch_options(const ProfileOptions& o) {
  launch::LaunchOptions l;
  l.argv = o.wrap.empty() ? o.command : launch::wrap_command(o.wrap);
  // Output-defined phases are read from the output lines, which are then stored too.
  l.capture_output = o.capture_output || !o.phases.empty();
  l.max_runtime = milliseconds(static_cast<std::int64_t>(o.max_runtime_s * 1000));
  l.kill_grace = milliseconds(static_cast<std::int64_t>(o.kill_grace_s * 1000));
  return l;
}

RunInfo run_info(const ProfileOptions& o, const launch::LaunchOptions& l,
                 const ranks::EnvLookup& env) {
  RunInfo info;
  info.command = l.argv;
  info.label = o.label;
  info.host = short_host_name();
  info.user = user_name();
  info.start_wall_ns = wall_now_ns();
  info.start_mono_ns = mono_now_ns();
  info.tool_version = kVersion;
  info.sampling_interval_ns = static_cast<std::int64_t>(o.sampling_ms * 1e6);
  info.power_sampling_interval_ns = static_cast<std::int64_t>(o.power_sampling_ms * 1e6);
  if (!o.backend.simulate.empty()) info.scenario = o.backend.simulate;
  info.cuda_visible_devices = env("CUDA_VISIBLE_DEVICES");
  info.slurm = ranks::read_slurm_context(env);
  info.ranks = ranks::read_rank_context(env);
  // Under SLURM the node's name is what people know it by (and what differs between the
  // emulated nodes of a test cluster on one machine).
  if (info.slurm.node_name) info.host = *info.slurm.node_name;
  return info;
}

// Under a launcher that starts one rank per GPU (mpirun, torchrun: as many ranks on the node as
// GPUs it may see, each rank picking the GPU of its local rank, CUDA's convention), each rank
// samples only its own GPU, so the ranks' files do not hold N copies of every GPU. SLURM binds
// GPUs itself (SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES), so its ranks are left as they are.
collect::GpuSelection one_gpu_per_rank(collect::GpuSelection selection, const RankContext& ranks) {
  if (!ranks.active() || ranks.launcher == "slurm" || !ranks.local_rank ||
      !ranks.local_world_size || *ranks.local_world_size < 2) {
    return selection;
  }
  const auto gpus = selection.indices.size();
  const auto local_ranks = static_cast<std::size_t>(*ranks.local_world_size);
  const auto local_rank = static_cast<std::size_t>(*ranks.local_rank);
  if (selection.keep_local_rank_gpu(local_rank, local_ranks)) {
    if (local_rank == 0) {
      selection.notes.push_back(fmt::format(
          "{} ranks on this node and {} GPUs: each rank samples the GPU of its local rank; "
          "--per-node samples them all from one rank, --gpus chooses",
          local_ranks, gpus));
    }
  } else if (local_rank == 0 && gpus > 1) {
    selection.notes.push_back(fmt::format(
        "{} ranks on this node each sample all {} GPUs; --per-node samples them once, from one "
        "rank",
        local_ranks, gpus));
  }
  return selection;
}

// The GPUs to sample and what the user should know about the choice.
collect::GpuSelection choose_gpus(const ProfileOptions& o, const collect::NodeGpus& gpus,
                                  const RunInfo& info, const ranks::EnvLookup& env) {
  const std::vector<DeviceDescription>& devices = gpus.system.devices;
  const collect::MigResolver mig = collect::mig_resolver(gpus);
  if (!o.gpus.empty()) return collect::select_gpus(o.gpus, devices, mig);
  if (o.per_node) return collect::select_gpus("all", devices, mig);  // the whole node
  if (auto amd = collect::amd_visible(env, devices)) {
    return one_gpu_per_rank(*std::move(amd), info.ranks);
  }
  if (auto visible = ranks::visible_gpus(env)) {
    return one_gpu_per_rank(
        collect::select_visible_gpus(visible->list, visible->source, devices, mig), info.ranks);
  }
  return one_gpu_per_rank(collect::select_gpus("all", devices, mig), info.ranks);
}

std::filesystem::path output_path(const ProfileOptions& o, const RunInfo& info) {
  ranks::OutputNaming naming{info.host, local_timestamp(), info.slurm, info.ranks, o.per_node};
  auto path = ranks::expand_output_path(o.output, naming);
  // Before the job starts: a path that cannot be a run database (a device, a FIFO, a name too
  // long, an existing file without -f) is refused with nothing run.
  (void)store::check_output_path(path, o.force);
  return path;
}

// What a run samples, each a device of the run: the GPUs, then the MIG devices (docs/mig.md).
std::vector<DeviceDescription> sampled_devices(const collect::GpuSelection& selection,
                                               const SystemDescription& system) {
  std::vector<DeviceDescription> sampled;
  for (unsigned index : selection.rows()) {
    sampled.push_back(collect::device_at(system.devices, index));
  }
  return sampled;
}

// Runs the job without sampling: the other ranks of a node under --per-node.
int run_unsampled(const launch::LaunchOptions& l) {
  launch::JobResult result = launch::run_job(l, {});
  if (result.spawn_failure) {
    fmt::print(stderr, "gpuscope: error: {}\n", result.spawn_failure->message());
  }
  return result.exit_code;
}

// The node's CPU and memory energy, read every second (docs/node-energy.md).
NodeWatchOptions node_watch_options(const ProfileOptions& o) {
  NodeWatchOptions node;
  node.sysfs_root = o.sysfs_root;
  node.proc_root = o.proc_root;
  node.verbose = o.verbose;
  return node;
}

// What the run takes from the options and the node's libraries (the GPUs, the run and its file
// are the caller's).
ProfiledRunSetup profiled_run_setup(const ProfileOptions& o, const collect::NodeGpus& gpus) {
  ProfiledRunSetup setup;
  setup.gpus = &gpus;
  setup.backend = o.backend;
  setup.force = o.force;
  setup.writer.flush_interval = milliseconds(static_cast<std::int64_t>(o.flush_ms));
  setup.sampler = {
      duration_cast<nanoseconds>(std::chrono::duration<double, std::milli>(o.sampling_ms)),
      duration_cast<nanoseconds>(std::chrono::duration<double, std::milli>(o.power_sampling_ms)),
      duration_cast<nanoseconds>(std::chrono::duration<double>(o.health_interval_s)),
      duration_cast<nanoseconds>(std::chrono::duration<double, std::milli>(o.energy_counter_ms))};
  setup.verbose = o.verbose;
  setup.process_interval = milliseconds(static_cast<std::int64_t>(o.process_sampling_ms));
  setup.marks = o.marks;
  setup.node = node_watch_options(o);
  return setup;
}

}  // namespace

int run_profile(const ProfileOptions& o) {
  // First, before NVML or the sampler start any thread: every thread must block the signals
  // the launcher forwards to the job.
  launch::SignalGuard signal_guard;
  validate(o);
  // Bad patterns are bad input: said before anything starts.
  std::vector<phases::OutputPhasePattern> output_phases =
      phases::parse_output_phases(o.phases, o.phase_ends);
  if (o.trace_kernels || o.trace_nvtx) require_cupti_library();  // before any GPU is opened
  const auto env = ranks::process_environment();
  const launch::LaunchOptions launch_opts = launch_options(o);
  RunInfo info = run_info(o, launch_opts, env);
  if (o.per_node && info.ranks.local_rank.value_or(0) != 0) return run_unsampled(launch_opts);
  if (o.per_node && info.ranks.active() && !info.ranks.local_rank) {
    fmt::print(stderr,
               "gpuscope: --per-node: {} gives no local rank, so every rank samples the whole "
               "node; give each node one gpuscope instead, or -o with %h and %r\n",
               *info.ranks.launcher);
  }

  const collect::NodeGpus gpus = collect::open_node_gpus(o.backend);
  const SystemDescription& system = gpus.system;
  info.driver_version = system.driver_version;
  const collect::GpuSelection selection = choose_gpus(o, gpus, info, env);
  const auto path = output_path(o, info);
  std::optional<KernelTracing> tracing;  // --trace-kernels
  if (o.trace_kernels || o.trace_nvtx) {
    tracing = prepare_kernel_tracing(path, o.force);
    tracing->kernels = o.trace_kernels;  // NVTX ranges come with either
  }
  const std::vector<DeviceDescription> sampled = sampled_devices(selection, system);

  for (const auto& note : gpus.notes) fmt::print(stderr, "gpuscope: {}\n", note);
  for (const auto& note : selection.notes) fmt::print(stderr, "gpuscope: {}\n", note);
  for (const auto& note : selection.mig_notes) fmt::print(stderr, "gpuscope: {}\n", note);

  ProfileLive live(o, info, sampled);  // --live, --push: checked before anything is written
  ProfiledRunSetup setup = profiled_run_setup(o, gpus);
  setup.indices = selection.rows();
  setup.devices = sampled;
  setup.info = info;
  setup.output = path;
  setup.output_phases = output_phases;
  std::unique_ptr<ProfiledRun> run;
  try {
    run = std::make_unique<ProfiledRun>(std::move(setup));
  } catch (const Error& e) {
    // Nothing has started yet: a bad output is bad input, reported as such.
    throw Error::usage(e.summary(), e.reason(), e.hint());
  }
  for (const auto& note : run->notes()) fmt::print(stderr, "gpuscope: {}\n", note);

  RunSink& run_sink = run->sink();
  collect::SampleSink& sink = live.sink(run_sink);
  live.start();
  Progress progress(o.quiet || o.live, info.start_mono_ns, selection.indices.size(), path.string());
  progress.started();
  launch::JobCallbacks callbacks;
  callbacks.on_tick = [&] {
    if (live.live()) live.draw();
    progress.tick(run_sink.samples(), run_sink.total_power_w());
  };
  callbacks.tick_interval = milliseconds(1000);
  launch::LaunchOptions job_opts = launch_opts;
  if (tracing) {
    for (auto& [name, value] : tracing_environment(*tracing)) job_opts.extra_env[name] = value;
  }
  const launch::JobResult result = run->run(job_opts, sink, callbacks);
  progress.finished();

  RunEnd end = run->end(result);
  live.finish(end);
  run->store_end(end);
  if (tracing && result.status == RunStatus::NotStarted) {
    std::error_code ignored;
    std::filesystem::remove(tracing->dir, ignored);  // empty: no process ever ran
  } else if (tracing) {
    const auto trace_problems =
        import_kernel_trace(*tracing, path, run->writer().run_id(), sampled,
                            info.start_wall_ns - info.start_mono_ns, result.end_mono_ns, o.quiet);
    end.problems.insert(end.problems.end(), trace_problems.begin(), trace_problems.end());
  }
  if (result.spawn_failure) {
    fmt::print(stderr, "gpuscope: error: {}\n", result.spawn_failure->message());
  }
  progress.summary(launch::describe_exit(result), end, selection.indices.size());
  return result.exit_code;
}

}  // namespace gpuscope::app
