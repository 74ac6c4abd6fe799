// `gpuscope serve`: a Prometheus exporter. The sampler runs on its own cadence; a scrape reads
// the latest values (never NVML); optionally the same samples are pushed to VictoriaMetrics. The
// work is app::run_serve.
#include <memory>

#include "app/live/serve_run.hpp"
#include "cli/command.hpp"
#include "cli/number_option.hpp"
#include "cli/push_options.hpp"

namespace gpuscope::cli {
namespace {

constexpr NumberRange kProcessSamplingMs{0, 3'600'000, "ms"};

}  // namespace

Command add_serve_command(CLI::App& parent) {
  auto o = std::make_shared<app::ServeRun>();
  CLI::App* app = parent.add_subcommand(
      "serve", "Serve the GPUs' metrics to Prometheus (/metrics), optionally pushing them too");
  add_backend_options(*app, o->backend);
  app->add_option("--listen", o->listen,
                  "Address to serve on, HOST:PORT (default 127.0.0.1:9400: this machine only; "
                  "0.0.0.0:9400 for every interface)")
      ->type_name("HOST:PORT");
  app->add_option("--web-config", o->web_config,
                  "TLS and basic authentication from a Prometheus exporter-toolkit web "
                  "configuration file (the one node_exporter's --web.config.file takes; "
                  "docs/live.md, \"Security\")")
      ->type_name("FILE");
  add_number_option(*app, "-i,--interval", o->interval_ms, kSamplingMs,
                    "Sampling interval in ms (default 1000)")
      ->type_name("MS");
  add_number_option(*app, "--health-interval", o->health_interval_s,
                    NumberRange(0, 3600, "s").with_hint("0 means no health"),
                    "Read the GPUs' health counters (ECC, remapped rows, PCIe replays, "
                    "violation times) every SECONDS (default 5; 0: not at all, and no Xid "
                    "series)")
      ->type_name("SECONDS");
  app->add_option("--gpus", o->gpus,
                  "GPUs to serve: indices, GPU-/MIG- or AMD UUIDs, or all (default)")
      ->type_name("LIST");
  app->add_option("--naming", o->naming,
                  "Metric names: gpuscope (gpuscope_power_watts, ...; default), dcgm "
                  "(dcgm-exporter's DCGM_FI_DEV_POWER_USAGE, ..., for its Grafana dashboards), "
                  "jobstats (Princeton jobstats' nvidia_gpu_duty_cycle, ..., with the SLURM job) "
                  "or amd (AMD's Device Metrics Exporter's gpu_gfx_activity, ...)")
      ->type_name("gpuscope|dcgm|jobstats|amd");
  app->add_option("--node-name", o->node_name,
                  "The node's name in the hostname label (default: SLURMD_NODENAME in a SLURM "
                  "job, NODE_NAME in a pod, else the host's short name)")
      ->envname("GPUSCOPE_NODE_NAME")
      ->type_name("NAME");
  add_number_option(*app, "--process-sampling-ms", o->process_sampling_ms, kProcessSamplingMs,
                    "How often to look at which processes use each GPU: per-process series and "
                    "the GPUs' pod/namespace/container/slurm_job_id labels (default 1000; 0: "
                    "never)")
      ->type_name("MS");
  app->add_option("--max-processes-per-gpu", o->max_processes_per_gpu,
                  "Per-process series for at most this many processes per GPU, those holding the "
                  "most memory (default 8)")
      ->check(CLI::Range(1, 1024))
      ->type_name("N");
  app->add_option("--process-series", o->process_series,
                  "What the per-process series show: full (pid, command, user, container, pod, "
                  "namespace, slurm_job_id), safe (the same without user and command) or off (no "
                  "per-process series; the GPUs keep their pod/job labels). Default: full on a "
                  "loopback --listen, safe otherwise")
      ->type_name("off|safe|full");
  app->add_flag("--no-node-energy{false}", o->node_energy,
                "No gpuscope_node_energy_joules_total series (the node's RAPL and Grace energy "
                "counters, docs/node-energy.md)");
  app->add_option("--sysfs-root", o->sysfs_root, "Where sysfs is (node energy)")->group("");
  add_push_options(*app, o->push);
  app->footer("Runs until SIGINT or SIGTERM. Metric names and labels: docs/live.md.");
  return {app, [o] { return app::run_serve(*o); }};
}

}  // namespace gpuscope::cli
