// Every job's GPUs summarised by the monitoring server itself, many jobs per query: for the
// series an exporter labels with a SLURM job (gpuscope serve's slurm_job_id, dcgm-exporter's
// hpc_job, jobstats' jobid; exporter_labels.hpp), one instant query per figure and series name
// holds a piece per job, `*_over_time(<its series>[<its window>] @ <its end>)`, marked with the
// job's id and joined with `or`: the server answers a number per job-GPU, never the samples,
// and each job's figures are those of its own window whichever batch it is asked in
// (docs/fleet.md, "How the figures are asked for").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tsdb/source.hpp"

namespace gpuscope::fleet {

// A job whose GPUs are asked for.
struct AggregateJob {
  std::string id;
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;  // sacct's End (whole seconds): the job ran until before end + 1 s
  std::vector<std::string> nodes;
  // Its nodes ran nothing else during its window (sacct says so): every GPU of them is its own
  // when no series names the job.
  bool exclusive = false;
};

// One GPU (or MIG instance) of one job, as the server summarised its labelled samples. Units are
// the catalog's: %, bytes, J, W.
struct GpuAggregate {
  std::string key;  // ingest::gpu_key: the UUID, else "<node>/gpu<index>"; " GI <id>" for MIG
  std::string node;
  std::optional<unsigned> index;
  std::string model;  // from the series' labels where the exporter puts it (modelName, name)
  std::optional<std::string> mig_profile;
  std::string family;  // the exporter family's name (ingest::family_name)
  double samples = 0;  // utilization samples
  std::optional<double> util_pct;
  std::optional<double> idle_share;  // of the utilization samples, those at or below the threshold
  std::optional<double> sm_active_pct;
  std::optional<double> occupancy_pct;
  std::optional<double> flop_pct;  // FP64 + FP32 + FP16 + tensor active, as the score takes it
  std::optional<double> memory_peak_bytes;
  std::optional<double> memory_used_mean_bytes;
  std::optional<double> memory_free_mean_bytes;
  std::optional<double> memory_total_bytes;  // a description series (jobstats)
  std::optional<double> energy_rise_j;       // the energy counter's rise
  std::optional<double> power_mean_w;
  std::optional<double> health_faults;  // Xid events, uncorrectable ECC errors, remap failures
};

// Which figures are asked: every one (jobs, usage, the accounting database), the utilization
// only (its mean, sample count and idle share: guard's idle windows), or that and the memory
// (guard's too-large advice). Fewer figures read fewer series on the server.
enum class Figures { All, Utilization, UtilizationAndMemory };

struct AggregateOptions {
  Figures figures = Figures::All;
  std::size_t jobs_per_query = 500;
  double idle_util_pct = 1;  // a sample at or below this utilization is idle
  // A batch's window reaches this far before its first job's start and after its last one's
  // end: samples a label names a little outside the job (the nodes' and the server's clocks
  // apart, the exporter's last scrape of the job's processes) are the job's.
  std::int64_t slack_ms = 60'000;
  // Prometheus has no count_le_over_time: the idle share is then a subquery at this step (its
  // evaluation times aligned to the clock: the same for a job in any batch).
  std::int64_t idle_step_ms = 2'000;
};

struct AggregateRead {
  std::map<std::string, std::vector<GpuAggregate>> by_job;  // job id → its GPUs
  std::map<std::string, std::string> matched_by;  // job id → "gpuscope serve's slurm_job_id"
  std::map<std::string, std::vector<std::string>> notes;  // job id → what is odd about it
  std::size_t queries = 0;
};

// The GPUs of `jobs` that an exporter labelled with them. Jobs no series names are absent from
// by_job. Throws Error when the server fails (the caller keeps nothing of the batch).
AggregateRead read_gpu_aggregates(tsdb::Source& source, std::span<const AggregateJob> jobs,
                                  const AggregateOptions& options);

}  // namespace gpuscope::fleet
