// `gpuscope profile`: run a command, sample its GPUs, write the run database, pass its exit
// status through.
#include <memory>

#include "app/profile/profile_options.hpp"
#include "app/profile/profile_run.hpp"
#include "cli/command.hpp"
#include "cli/number_option.hpp"
#include "cli/push_options.hpp"

namespace gpuscope::cli {
namespace {

constexpr NumberRange kProfileSamplingMs =
    kSamplingMs.with_hint("use --power-sampling-ms for faster power and energy readings");
// NVML refreshes power every 10-100 ms depending on the GPU.
constexpr NumberRange kPowerSamplingMs{10, 3'600'000, "ms"};
constexpr NumberRange kEnergyCounterMs =
    NumberRange(0, 3'600'000, "ms").with_hint("0 means at every sample");
// A year: past any scheduler's limit, and far from overflowing nanoseconds.
constexpr NumberRange kMaxRuntimeS = NumberRange(0, 31'536'000, "s").with_hint("0 means no limit");
constexpr NumberRange kKillGraceS{0, 3600, "s"};
constexpr NumberRange kFlushMs{10, 60'000, "ms"};
constexpr NumberRange kProcessSamplingMs{0, 3'600'000, "ms"};
constexpr NumberRange kHealthIntervalS = NumberRange(0, 3600, "s").with_hint("0 means no health");

}  // namespace

Command add_profile_command(CLI::App& parent) {
  auto o = std::make_shared<app::ProfileOptions>();
  CLI::App* app = parent.add_subcommand(
      "profile", "Run a command and record every GPU metric into a run database");
  app->footer(
      "Usage: gpuscope profile [OPTIONS] -- CMD [ARGS...]\n"
      "       gpuscope profile [OPTIONS] --wrap \"CMD ARGS\"\n"
      "gpuscope exits with the job's status (128+N when a signal N ended it, 127 when the command "
      "is not found, 126 when it cannot be executed). The run database is documented in "
      "docs/database.md.");
  add_backend_options(*app, o->backend);
  app->add_option("-o,--output", o->output,
                  "Run database: a file, a directory (one file per rank), or a pattern with "
                  "%j job, %s step, %r rank, %l local rank, %h host, %t time, %p pid (default "
                  "under srun: gpuscope-<job>.<step>/<host>.rank<r>.db; under mpirun or "
                  "torchrun: gpuscope-<launcher>-<job>/<host>.rank<r>.db)")
      ->type_name("PATH");
  app->add_flag("-f,--force-overwrite", o->force, "Replace an existing output file");
  app->add_option("-w,--wrap", o->wrap,
                  "Run this shell command string (/bin/sh -c), as sbatch --wrap")
      ->type_name("\"CMD ARGS\"");
  add_number_option(*app, "-s,--sampling-ms", o->sampling_ms, kProfileSamplingMs,
                    "Sampling interval in ms (default 100)")
      ->type_name("MS");
  add_number_option(*app, "--power-sampling-ms", o->power_sampling_ms, kPowerSamplingMs,
                    "Also sample power and the energy counter every MS ms, faster than the main "
                    "cadence")
      ->type_name("MS");
  add_number_option(*app, "--energy-counter-ms", o->energy_counter_ms, kEnergyCounterMs,
                    "Read the energy counter only every MS ms (default: at every sample). On an "
                    "H200 one read spins a core for 3-4 ms; the run's energy stays the counter's "
                    "(docs/nvml.md)")
      ->type_name("MS");
  add_number_option(*app, "--health-interval", o->health_interval_s, kHealthIntervalS,
                    "Read the GPUs' health counters (ECC, remapped rows, PCIe replays, "
                    "violation times) every SECONDS (default 5; 0: not at all, and no Xid "
                    "events)")
      ->type_name("SECONDS");
  add_number_option(*app, "-m,--max-runtime", o->max_runtime_s, kMaxRuntimeS,
                    "Stop the job after SECONDS (SIGTERM, then SIGKILL after --kill-grace); 0 = "
                    "none")
      ->type_name("SECONDS");
  add_number_option(*app, "--kill-grace", o->kill_grace_s, kKillGraceS,
                    "Seconds between SIGTERM and SIGKILL at --max-runtime (default 10)")
      ->type_name("SECONDS");
  app->add_option("-l,--label", o->label, "A label stored with the run")->type_name("TEXT");
  app->add_option("--gpus", o->gpus,
                  "GPUs to sample: indices (AMD GPUs after NVIDIA's), GPU-/MIG- or AMD UUIDs, or "
                  "all (default: the GPUs the job may see: CUDA_VISIBLE_DEVICES, "
                  "ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES, SLURM_STEP_GPUS, else all)")
      ->type_name("LIST");
  app->add_flag("--capture-output", o->capture_output,
                "Store the job's stdout/stderr lines with timestamps (still shown as usual)");
  app->add_flag("--per-node", o->per_node,
                "Under srun, mpirun, torchrun or any launcher: only local rank 0 samples, "
                "covering all GPUs of its node (the processes table says which rank used which)");
  add_number_option(*app, "--process-sampling-ms", o->process_sampling_ms, kProcessSamplingMs,
                    "How often to record which processes use each GPU, with their container, "
                    "pod, SLURM job and rank (default 1000; 0: never)")
      ->type_name("MS");
  app->add_flag("-v,--verbose", o->verbose, "Print every sample and event on stderr");
  app->add_flag("-q,--quiet", o->quiet, "No progress line");
  app->add_flag("--live", o->live,
                "Show the live table of 'gpuscope monitor' on stderr instead of the progress line");
  add_push_options(*app, o->push);
  app->add_flag("--trace-kernels", o->trace_kernels,
                "Also record the job's CUDA kernels, memcpy and memset (CUPTI, through "
                "CUDA_INJECTION64_PATH) into the run database (docs/kernels.md)");
  app->add_flag("--trace-nvtx", o->trace_nvtx,
                "Record the job's NVTX ranges as phases (CUPTI, through NVTX_INJECTION64_PATH), "
                "without the kernel trace; --trace-kernels records them too (docs/phases.md)");
  app->add_option("--phase", o->phases,
                  "A phase begun by each output line matching REGEX (group 1: which one, e.g. the "
                  "epoch), ended by the next or by --phase-end; NAME=REGEX names it (implies "
                  "--capture-output; docs/phases.md)")
      ->type_name("[NAME=]REGEX")
      ->allow_extra_args(false);
  app->add_option("--phase-end", o->phase_ends,
                  "The output line that ends phase NAME (given by --phase)")
      ->type_name("NAME=REGEX")
      ->allow_extra_args(false);
  app->add_flag("!--no-marks", o->marks,
                "Do not listen for 'gpuscope mark' (GPUSCOPE_MARK_SOCKET is not set in the job)");
  add_number_option(*app, "--flush-ms", o->flush_ms, kFlushMs,
                    "How often samples are committed to disk (ms)")
      ->group("");  // for tests of crash safety; 1000 ms is right for everyone else
  app->add_option("--sysfs-root", o->sysfs_root, "Where sysfs is (node energy)")->group("");
  app->add_option("--proc-root", o->proc_root, "Where procfs is (node CPU time)")->group("");
  app->add_option("command", o->command, "The command to run, after --")->type_name("CMD ARGS");
  app->positionals_at_end(false);
  return {app, [o] { return app::run_profile(*o); }};
}

}  // namespace gpuscope::cli
