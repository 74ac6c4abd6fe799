// `gpuscope serve`: a Prometheus exporter. The sampler runs on its own cadence; a scrape reads
// the latest values (never NVML); optionally the same samples are pushed to VictoriaMetrics.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "app/live_gpus.hpp"
#include "app/process_watch.hpp"
#include "app/run_context.hpp"
#include "cli/command.hpp"
#include "cli/number_option.hpp"
#include "cli/push_options.hpp"
#include "collect/sampler.hpp"
#include "export/exposition.hpp"
#include "export/latest_values.hpp"
#include "export/metrics_server.hpp"
#include "export/process_exposition.hpp"
#include "export/tee_sink.hpp"
#include "ranks/rank_context.hpp"

namespace gpuscope::cli {
namespace {

constexpr NumberRange kProcessSamplingMs{0, 3'600'000, "ms"};

struct ServeOptions {
  collect::BackendOptions backend;
  std::string listen = "127.0.0.1:9400";
  double interval_ms = 1000;
  std::string gpus;
  std::string naming = "gpuscope";
  std::string node_name;  // --node-name or GPUSCOPE_NODE_NAME; empty: the scheduler's or host's
  app::PushOptions push;
  double process_sampling_ms = 1000;  // 0: no process series
  std::size_t max_processes_per_gpu = 8;
};

exporter::ExportLabels labels_for(const app::LiveGpus& gpus, const std::string& node_name) {
  exporter::ExportLabels labels;
  labels.driver_version = gpus.system.driver_version.value_or("");
  const RankContext context = ranks::read_rank_context(ranks::process_environment());
  labels.hostname = exporter::node_label(node_name, context.node_name, app::short_host_name());
  return labels;
}

int run_serve(const ServeOptions& o) {
  app::StopSignals stop;  // before any thread
  const auto interval = app::sampling_interval(o.interval_ms, "--interval");
  auto address = exporter::parse_listen_address(o.listen);
  const auto naming = exporter::naming_from_text(o.naming);
  if (!naming) {
    throw Error::usage(fmt::format("--naming '{}' is not a naming", o.naming), {},
                       "use gpuscope (gpuscope_* names), dcgm (dcgm-exporter's DCGM_FI_* names) "
                       "or jobstats (Princeton jobstats' nvidia_gpu_* names)");
  }
  app::LiveGpus gpus = app::open_live_gpus(o.backend, o.gpus, interval);
  const exporter::ExportLabels labels = labels_for(gpus, o.node_name);

  exporter::LatestValues latest(gpus.identities);
  // Which processes use each GPU: per-process series and the GPUs' workload labels.
  std::unique_ptr<app::ProcessWatch> processes;
  std::optional<exporter::ProcessSource> process_source;
  if (o.process_sampling_ms > 0) {
    std::vector<nvml::Device> devices;
    for (const auto& identity : gpus.identities) {
      if (auto device = gpus.session->try_device(identity.index)) devices.push_back(*device);
    }
    app::ProcessWatchOptions options;
    options.interval = std::chrono::milliseconds(static_cast<std::int64_t>(o.process_sampling_ms));
    processes = std::make_unique<app::ProcessWatch>(std::move(devices), options);
    process_source = exporter::ProcessSource{[&processes] { return processes->latest(); },
                                             [&processes] { return processes->looks(); },
                                             o.max_processes_per_gpu};
  }
  exporter::ExpositionCache cache(latest, exporter::Exposition(*naming, labels, gpus.identities),
                                  process_source);
  // Pushed series always carry gpuscope's names: they are stored, and dashboards for stored
  // gpuscope data use them.
  const exporter::Exposition push_exposition(exporter::Naming::Gpuscope, labels, gpus.identities);
  std::unique_ptr<exporter::Pusher> pusher;
  // serve's samples exist nowhere else: what cannot be delivered at the end is saved to a file.
  if (o.push.enabled()) pusher = app::make_pusher(o.push, push_exposition, true);
  if (pusher && processes) {
    pusher->follow_workload([&processes] { return processes->looks(); },
                            [&processes] {
                              return exporter::workload_labels(processes->latest(),
                                                               exporter::Naming::Gpuscope);
                            });
  }

  exporter::MetricsServer server(address, cache);
  server.start();  // fails here, before sampling, when the port is taken
  std::vector<collect::SampleSink*> sinks{&latest};
  if (pusher) sinks.push_back(pusher.get());
  exporter::TeeSink sink(sinks);
  const std::size_t count = gpus.readers.size();
  collect::Sampler sampler(std::move(gpus.readers), {interval, {}}, sink);
  sampler.start();
  if (processes) processes->start();
  if (pusher) pusher->start();

  fmt::print(stderr,
             "gpuscope: serving {} GPU{} at http://{}/metrics ({} names), sampling every {} ms{}\n",
             count, count == 1 ? "" : "s", address.text(), o.naming, o.interval_ms,
             pusher ? fmt::format(", pushing to {}", o.push.url) : "");
  if (!address.loopback()) {
    fmt::print(stderr, "gpuscope: note: {} is reachable from other machines\n", address.text());
  }
  while (!stop.wait(std::chrono::seconds(3600))) {
  }
  fmt::print(stderr, "gpuscope: stopping\n");
  server.stop();
  if (processes) processes->stop();
  sampler.stop();
  if (pusher) app::report_push(pusher->finish(std::chrono::seconds(5)), o.push);
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& parent) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* app = parent.add_subcommand(
      "serve", "Serve the GPUs' metrics to Prometheus (/metrics), optionally pushing them too");
  add_backend_options(*app, o->backend);
  app->add_option("--listen", o->listen,
                  "Address to serve on, HOST:PORT (default 127.0.0.1:9400: this machine only; "
                  "0.0.0.0:9400 for every interface)")
      ->type_name("HOST:PORT");
  add_number_option(*app, "-i,--interval", o->interval_ms, kSamplingMs,
                    "Sampling interval in ms (default 1000)")
      ->type_name("MS");
  app->add_option("--gpus", o->gpus,
                  "GPUs to serve: NVML indices, GPU-/MIG- UUIDs or all (default)")
      ->type_name("LIST");
  app->add_option("--naming", o->naming,
                  "Metric names: gpuscope (gpuscope_power_watts, ...; default), dcgm "
                  "(dcgm-exporter's DCGM_FI_DEV_POWER_USAGE, ..., for its Grafana dashboards) or "
                  "jobstats (Princeton jobstats' nvidia_gpu_duty_cycle, ..., with the SLURM job)")
      ->type_name("gpuscope|dcgm|jobstats");
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
  add_push_options(*app, o->push);
  app->footer("Runs until SIGINT or SIGTERM. Metric names and labels: docs/exporters.md.");
  return {app, [o] { return run_serve(*o); }};
}

}  // namespace gpuscope::cli
