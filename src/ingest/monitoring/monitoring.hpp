// A job's GPUs read from the site's monitoring database (Prometheus, VictoriaMetrics) into runs:
// which series are the job's (the exporters' label conventions, tried in a documented order),
// their names and units (gpuscope serve, dcgm-exporter old and new, jobstats' exporter), raw
// samples at the scrape times or, for huge jobs, the server's own summaries per time bucket.
// One run per node, devices by UUID; nothing invented: what no exporter recorded stays NULL
// and is said (docs/jobs.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "ingest/run_target.hpp"
#include "tsdb/source.hpp"

namespace gpuscope::ingest {

// The job whose GPUs are read: its window and where it ran, from the scheduler (SLURM's
// accounting, kube-state-metrics) or given by the user.
struct JobWindow {
  std::string kind;  // "slurm", "pod", "hosts"
  std::string id;    // the SLURM job id, "namespace/name" of a pod, "" for hosts
  tsdb::Window window;
  std::vector<std::string> nodes;  // host names as the scheduler knows them
  std::optional<int> gpus;         // GPUs allocated in all, where the scheduler says
  bool running = false;            // still running: the window ends now
  // The nodes ran nothing else meanwhile (checked by the caller against the scheduler), so
  // "every GPU of the job's nodes" is a fair last resort when no series names the job.
  bool exclusive = false;
  std::optional<std::string> user;
  std::optional<std::string> name;  // the job's name
  std::optional<std::string> pod_namespace;
  std::optional<std::string> pod_name;
};

struct MonitoringOptions {
  // Above this many samples (GPUs × metrics × scrapes) the series are not pulled: the server
  // summarises each GPU per time bucket instead (avg/max over the bucket, counters' values).
  std::size_t max_raw_points = 20'000'000;
  // Buckets of the summarised timeline (the window divided into about this many).
  std::size_t summary_buckets = 240;
  bool force_summary = false;  // --summary
  // Longer windows are refused (a job's start or end misread as years apart); the caller may
  // narrow the window.
  double max_window_days = 366;
};

// What read_job found and did, for the user.
struct MonitoringResult {
  std::string family;       // "gpuscope serve", "dcgm-exporter", "jobstats (nvidia_gpu_*)"
  std::string matched_by;   // how the job's GPUs were found: "label slurm_job_id=123", ...
  double resolution_s = 0;  // scrape interval found, or the summary's bucket width
  bool summarised = false;  // the server's per-bucket summaries, not the samples
  std::size_t gpus = 0;
  std::size_t runs = 0;                    // one per node with series
  std::int64_t samples = 0;                // sample rows written (per GPU per scrape or bucket)
  std::vector<std::string> nodes_missing;  // job nodes no exporter series was found for
  std::vector<std::string> notes;          // what is missing, assumed, or odd, said once each
};

// The server has nothing of the job: no series names it, or its series hold no sample in the
// window. What a retention that passed explains, unlike a query the server refused.
class NoJobSeries : public Error {
 public:
  using Error::Error;
};

// Finds the job's GPUs in `source` and writes one run per node into `target`. Throws Error
// saying what was not found and what to try (NoJobSeries, nodes missing, a refusal, ...).
MonitoringResult read_job(tsdb::Source& source, const JobWindow& job,
                          const MonitoringOptions& options, RunTarget& target);

}  // namespace gpuscope::ingest
