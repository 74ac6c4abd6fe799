#include "app/live/serve_run.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/live/live_gpus.hpp"
#include "app/profile/node_watch.hpp"
#include "app/profile/run_context.hpp"
#include "collect/gpu_selection.hpp"
#include "collect/node_gpus.hpp"
#include "collect/process_watch.hpp"
#include "collect/sampler.hpp"
#include "core/error.hpp"
#include "exporter/exposition.hpp"
#include "exporter/latest_values.hpp"
#include "exporter/metrics_server.hpp"
#include "exporter/node_energy_series.hpp"
#include "exporter/process_exposition.hpp"
#include "exporter/tee_sink.hpp"
#include "exporter/web_config.hpp"
#include "ranks/rank_context.hpp"

namespace gpuscope::app {
namespace {

exporter::ExportLabels labels_for(const LiveGpus& gpus, const std::string& node_name) {
  exporter::ExportLabels labels;
  labels.driver_version = gpus.node.system.driver_version.value_or("");
  const RankContext context = ranks::read_rank_context(ranks::process_environment());
  labels.hostname = exporter::node_label(node_name, context.node_name, short_host_name());
  return labels;
}

exporter::ProcessSeries process_series_for(const ServeRun& o,
                                           const exporter::ListenAddress& address) {
  if (o.process_series.empty()) return exporter::default_process_series(address.loopback());
  const auto series = exporter::process_series_from_text(o.process_series);
  if (!series) {
    throw Error::usage(fmt::format("--process-series '{}' is not a choice", o.process_series), {},
                       "use off (no per-process series), safe (without the user and command "
                       "labels) or full (every label)");
  }
  return *series;
}

// The lines serve says once it runs: where, what, and what a listener others reach reveals.
void announce(const ServeRun& o, const exporter::ListenAddress& address, const std::string& where,
              std::size_t count, std::size_t instances, bool pushing, bool safe_by_default) {
  fmt::print(
      stderr, "gpuscope: serving {} GPU{}{} at {} ({} names), sampling every {} ms{}\n", count,
      count == 1 ? "" : "s",
      instances == 0 ? ""
                     : fmt::format(" and {} MIG instance{}", instances, instances == 1 ? "" : "s"),
      where, o.naming, o.interval_ms, pushing ? fmt::format(", pushing to {}", o.push.url) : "");
  if (!address.loopback()) {
    fmt::print(stderr, "gpuscope: note: {} is reachable from other machines\n", address.text());
  }
  if (safe_by_default) {
    fmt::print(stderr,
               "gpuscope: note: per-process series leave out the user and command labels on a "
               "listener other machines reach; --process-series full adds them, "
               "--process-series off drops per-process series\n");
  }
}

}  // namespace

int run_serve(const ServeRun& o) {
  StopSignals stop;  // before any thread
  const auto interval = sampling_interval(o.interval_ms, "--interval");
  auto address = exporter::parse_listen_address(o.listen);
  const exporter::ProcessSeries series = process_series_for(o, address);
  check_push_options(o.push);
  const auto naming = exporter::naming_from_text(o.naming);
  if (!naming) {
    throw Error::usage(fmt::format("--naming '{}' is not a naming", o.naming), {},
                       "use gpuscope (gpuscope_* names), dcgm (dcgm-exporter's DCGM_FI_* names), "
                       "jobstats (Princeton jobstats' nvidia_gpu_* names) or amd (AMD's Device "
                       "Metrics Exporter's gpu_* names)");
  }
  // The web config first: a bad file or certificate fails before any GPU is opened.
  exporter::ServerSecurity security;
  if (!o.web_config.empty()) {
    std::vector<std::string> notes;
    security = exporter::make_security(exporter::load_web_config(o.web_config), notes);
    for (const auto& note : notes) fmt::print(stderr, "gpuscope: {}\n", note);
  }
  const bool https = security.tls != nullptr;
  const std::string secured = security.auth ? " with basic authentication" : "";
  LiveGpus gpus = open_live_gpus(o.backend, o.gpus, interval, /*mig_devices=*/true);
  const exporter::ExportLabels labels = labels_for(gpus, o.node_name);

  exporter::LatestValues latest(gpus.identities);
  // Which processes use each GPU: per-process series and the GPUs' workload labels.
  std::unique_ptr<collect::ProcessWatch> processes;
  std::optional<exporter::ProcessSource> process_source;
  if (o.process_sampling_ms > 0) {
    std::vector<DeviceDescription> sampled;
    for (const auto& identity : gpus.identities) {
      sampled.push_back(collect::device_at(gpus.node.system.devices, identity.index));
    }
    collect::ProcessWatchOptions options;
    options.interval = std::chrono::milliseconds(static_cast<std::int64_t>(o.process_sampling_ms));
    processes = std::make_unique<collect::ProcessWatch>(
        collect::watched_devices(gpus.node, sampled), options);
    // What --process-series hides is removed before anything renders it: /metrics and pushes.
    process_source = exporter::ProcessSource{
        [&processes, series] { return exporter::reveal(processes->latest(), series); },
        [&processes] { return processes->looks(); },
        exporter::processes_shown(series, o.max_processes_per_gpu)};
  }
  NodeEnergyLive node = node_energy_live(o.node_energy, o.sysfs_root, labels.hostname);
  exporter::ExpositionCache cache(latest, exporter::Exposition(*naming, labels, gpus.identities),
                                  process_source, node.series.get());
  // Pushed series always carry gpuscope's names: they are stored, and dashboards for stored
  // gpuscope data use them.
  const exporter::Exposition push_exposition(exporter::Naming::Gpuscope, labels, gpus.identities);
  std::unique_ptr<exporter::Pusher> pusher;
  // serve's samples exist nowhere else: what cannot be delivered at the end is saved to a file.
  if (o.push.enabled()) pusher = make_pusher(o.push, push_exposition, true);
  if (pusher && processes) {
    pusher->follow_workload([&processes] { return processes->looks(); },
                            [&processes, series] {
                              return exporter::workload_labels(
                                  exporter::reveal(processes->latest(), series),
                                  exporter::Naming::Gpuscope);
                            });
  }

  exporter::MetricsServer server(address, cache, std::move(security));
  server.start();  // fails here, before sampling, when the port is taken
  std::vector<collect::SampleSink*> sinks{&latest};
  if (pusher) sinks.push_back(pusher.get());
  exporter::TeeSink sink(sinks);
  const std::size_t count = gpus.gpu_count;
  const std::size_t instances = gpus.readers.size() - gpus.gpu_count;
  const auto health = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(o.health_interval_s));
  collect::Sampler sampler(std::move(gpus.readers), {interval, {}, health}, sink,
                           node.attach(sink));
  sampler.start();
  for (const auto& note : sampler.health_notes()) fmt::print(stderr, "gpuscope: note: {}\n", note);
  if (processes) processes->start();
  if (pusher) pusher->start();

  announce(o, address,
           fmt::format("{}://{}/metrics{}", https ? "https" : "http", address.text(), secured),
           count, instances, pusher != nullptr,
           o.process_series.empty() && series == exporter::ProcessSeries::Safe &&
               o.process_sampling_ms > 0);
  while (!stop.wait(std::chrono::seconds(3600))) {
  }
  fmt::print(stderr, "gpuscope: stopping\n");
  server.stop();
  if (processes) processes->stop();
  sampler.stop();
  if (pusher) report_push(pusher->finish(std::chrono::seconds(5)), o.push);
  return 0;
}

}  // namespace gpuscope::app
