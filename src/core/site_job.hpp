// One finished (or running) GPU job of the site as `gpuscope jobs` shows it and the accounting
// database keeps it: who ran it where, what it was given, and what its GPUs did, one row per
// job and one per job-GPU (docs/fleet.md says what each figure means and how it is computed).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope {

// What a job is flagged for (docs/fleet.md, "Flags").
enum class JobFlag {
  IdleGpus,     // a GPU idle (utilization at most 1 %) for at least half of the job
  Straggler,    // a GPU more than 15 % less active than the job's median GPU
  GpuTooLarge,  // little memory and little activity: a MIG slice or a smaller GPU would do
  HealthFault,  // an Xid, an uncorrectable ECC error or a row remap failure during the job
  Count
};

inline constexpr std::array<std::string_view, static_cast<std::size_t>(JobFlag::Count)>
    kJobFlagWords = {"idle", "straggler", "too-large", "health"};

inline std::string_view flag_word(JobFlag flag) {
  return kJobFlagWords[static_cast<std::size_t>(flag)];
}
// The flag a word names; nullopt for an unknown word.
inline std::optional<JobFlag> parse_flag(std::string_view word) {
  for (std::size_t i = 0; i < kJobFlagWords.size(); ++i) {
    if (kJobFlagWords[i] == word) return static_cast<JobFlag>(i);
  }
  return std::nullopt;
}

// Where a GPU's energy comes from: the hardware counter's rise over the job, or the mean power
// times the job's time (an exporter without a counter).
enum class EnergySource { Counter, Integrated };

// One GPU (or MIG instance) of one job: its figures over the job, from the exporter's samples.
struct SiteJobGpu {
  std::string key;  // the GPU's UUID, else "<node>/gpu<index>"; " GI <id>" after for an instance
  std::string node;
  std::optional<unsigned> index;
  std::string model;                       // "NVIDIA H100 80GB HBM3"; "" when not exported
  std::optional<std::string> mig_profile;  // a MIG instance's ("1g.10gb")
  std::int64_t samples = 0;                // the utilization's samples in the job
  std::optional<double> util_pct;          // mean GPU utilization, %
  std::optional<double> sm_active_pct;     // mean SM active, % (saturation metrics)
  std::optional<double> idle_share;        // of the samples, those at utilization ≤ 1 %
  std::optional<double> peak_memory_bytes;
  std::optional<double> memory_total_bytes;
  std::optional<double> energy_j;
  std::optional<EnergySource> energy_source;
  std::optional<double> mean_power_w;
  std::optional<double> score;  // gssr's score of the GPU's mean activities (docs/fleet.md)
  int health_faults = 0;        // Xid events, uncorrectable ECC errors, row remap failures
};

// Where a job's figures came from.
enum class JobSource {
  Tsdb,         // the site's Prometheus or VictoriaMetrics
  KeptSummary,  // the summary `job --keep-summary` kept at its end
  None,         // nothing: the server forgot it and no summary was kept (figures absent)
};

struct SiteJob {
  std::string id;        // sacct's JobIDRaw: unique, what `gpuscope job` takes
  std::string shown_id;  // sacct's JobID: 123_4 for an array task, 123+1 for a component
  std::string name;
  std::string user;
  std::string account;
  std::string partition;
  std::string state;  // COMPLETED, FAILED, TIMEOUT, CANCELLED, OUT_OF_MEMORY, RUNNING, ...
  std::optional<int> exit_code;
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;  // now, for a running job
  bool running = false;
  std::vector<std::string> nodes;
  // Its nodes ran no other GPU job during it (sacct): when no series names the job, every GPU
  // of them is its own. Not kept in the database.
  bool nodes_alone = false;
  int gpus = 0;           // allocated (AllocTRES gres/gpu)
  std::string gpu_model;  // the GPUs' model where the series or AllocTRES say; "" otherwise
  double gpu_hours = 0;   // elapsed × allocated GPUs
  std::optional<double> idle_gpu_hours;
  std::optional<double> util_pct;       // over the job's GPUs with samples
  std::optional<double> sm_active_pct;  // ditto
  std::optional<double> peak_memory_bytes;
  std::optional<double> energy_j;       // the GPUs'
  std::optional<double> node_energy_j;  // the nodes', where an exporter recorded it
  std::optional<double> co2_g;          // the GPUs' energy at the intensity, times PUE
  std::optional<double> score;
  std::vector<JobFlag> flags;
  JobSource source = JobSource::None;
  std::vector<std::string> notes;  // what is missing or odd about its figures
  std::vector<SiteJobGpu> gpu_rows;

  double elapsed_s() const { return static_cast<double>(end_ms - start_ms) / 1000.0; }
  bool has(JobFlag flag) const {
    for (const JobFlag f : flags) {
      if (f == flag) return true;
    }
    return false;
  }
};

inline std::string_view source_word(JobSource source) {
  switch (source) {
    case JobSource::Tsdb:
      return "tsdb";
    case JobSource::KeptSummary:
      return "kept summary";
    case JobSource::None:
      break;
  }
  return "none";
}

// `gpuscope usage`: the jobs of a period summed per group (CEEMS' and XDMoD's tables).
enum class UsageBy { User, Account, Partition, GpuModel, Day, Week };

struct UsageRow {
  std::string group;  // the user, account, ...; a day as 2026-11-28, a week as 2026-W48
  std::int64_t jobs = 0;
  double gpu_hours = 0;
  double idle_gpu_hours = 0;  // of the jobs whose figures are known
  double energy_j = 0;
  double co2_g = 0;
  // Means weighted by GPU-hours over the jobs that have the figure; nullopt when none has.
  std::optional<double> util_pct;
  std::optional<double> sm_active_pct;
  std::optional<double> score;
  std::int64_t jobs_without_figures = 0;  // gone with the retention, no summary kept
  std::int64_t flagged_jobs = 0;          // with at least one flag
};

}  // namespace gpuscope
