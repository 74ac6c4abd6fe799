// `gpuscope serve`, start to end: a Prometheus exporter. The sampler runs on its own cadence; a
// scrape reads the latest values (never NVML); optionally the same samples are pushed to
// VictoriaMetrics.
#pragma once

#include <cstddef>
#include <string>

#include "app/profile/push.hpp"
#include "collect/backend.hpp"

namespace gpuscope::app {

struct ServeRun {
  collect::BackendOptions backend;
  std::string listen = "127.0.0.1:9400";
  double interval_ms = 1000;
  double health_interval_s = 5;  // 0: no health counters, no Xid events
  std::string gpus;
  std::string naming = "gpuscope";
  std::string node_name;  // --node-name or GPUSCOPE_NODE_NAME; empty: the scheduler's or host's
  PushOptions push;
  double process_sampling_ms = 1000;  // 0: no process series
  std::size_t max_processes_per_gpu = 8;
  std::string web_config;  // exporter-toolkit's web configuration file; empty: plain HTTP, open
  // --process-series off|safe|full: what the per-process series show (and what is pushed);
  // empty: full on a loopback listener, safe otherwise (exporter/process_exposition.hpp).
  std::string process_series;
  // The node's RAPL / Grace energy series (docs/node-energy.md), read from this sysfs (hidden
  // --sysfs-root, for tests); node_energy false: none (--no-node-energy).
  bool node_energy = true;
  std::string sysfs_root = "/sys";
};

// Serves the GPUs' metrics at `o.listen` until SIGINT or SIGTERM; returns the exit code.
// Throws Error (usage for bad options).
int run_serve(const ServeRun& o);

}  // namespace gpuscope::app
