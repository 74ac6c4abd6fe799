// What a power-limit (or SM-clock) sweep is made of: its plan, each trial's measurements, the
// per-setting summaries, the recommendations and the restore record. Plain data shared by
// sweep/ (the pure computations), store/ (the sweep tables) and report/ (tables, plots).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::sweep {

// What the sweep varies: the power limit (W) or a locked SM clock (MHz).
enum class Knob { PowerLimit, SmClock };

// "power_limit" / "sm_clock": the word stored in the database and JSON.
inline const char* knob_name(Knob knob) {
  return knob == Knob::PowerLimit ? "power_limit" : "sm_clock";
}
// "W" / "MHz".
inline const char* knob_unit(Knob knob) {
  return knob == Knob::PowerLimit ? "W" : "MHz";
}

// One setting of the plan. The baseline is the GPU's default (default power limit, or unlocked
// clocks, stored as the maximum SM clock): savings are measured against it.
struct Setting {
  double value = 0;  // W or MHz
  bool baseline = false;
};

// How a trial ended, and how the whole sweep did; stored and printed as the words below.
enum class TrialStatus { Planned, Ok, Failed, Interrupted };
enum class SweepStatus { Finished, Failed, Interrupted };

// "planned", "ok", "failed", "interrupted".
inline std::string_view status_text(TrialStatus status) {
  switch (status) {
    case TrialStatus::Ok:
      return "ok";
    case TrialStatus::Failed:
      return "failed";
    case TrialStatus::Interrupted:
      return "interrupted";
    case TrialStatus::Planned:
      break;
  }
  return "planned";
}
// "finished", "failed", "interrupted".
inline std::string_view status_text(SweepStatus status) {
  switch (status) {
    case SweepStatus::Failed:
      return "failed";
    case SweepStatus::Interrupted:
      return "interrupted";
    case SweepStatus::Finished:
      break;
  }
  return "finished";
}
// The statuses a stored word stands for; nullopt for a word this gpuscope does not know.
inline std::optional<TrialStatus> parse_trial_status(std::string_view text) {
  for (auto s :
       {TrialStatus::Planned, TrialStatus::Ok, TrialStatus::Failed, TrialStatus::Interrupted}) {
    if (status_text(s) == text) return s;
  }
  return std::nullopt;
}
inline std::optional<SweepStatus> parse_sweep_status(std::string_view text) {
  for (auto s : {SweepStatus::Finished, SweepStatus::Failed, SweepStatus::Interrupted}) {
    if (status_text(s) == text) return s;
  }
  return std::nullopt;
}

// One (setting, repeat) trial: a profiled run of the command.
struct Trial {
  int number = 0;  // 1-based, in the order run
  double setting = 0;
  bool baseline = false;
  int repeat = 1;                      // 1-based
  std::optional<std::int64_t> run_id;  // the trial's run in the sweep database
  TrialStatus status = TrialStatus::Planned;
  std::optional<int> exit_code;
  double time_s = 0;  // the measured window: job start + warmup (or the begin marker) .. job end
                      // (or the end marker)
  std::optional<double> energy_j;     // all selected GPUs, energy counter delta over the window
  std::string energy_source;          // "counter", "sampled power" or "" when unknown
  std::optional<double> avg_power_w;  // energy_j / time_s
  std::optional<double> work_units;
  std::optional<double> throughput;  // work units per second
  std::optional<double> energy_per_unit_j;
  std::optional<double> temperature_mean_c;
  std::optional<double> temperature_max_c;
  std::optional<double> sm_clock_mean_mhz;
  bool outlier = false;  // flagged by flag_outliers(); left out of the summary
};

// The spread of one quantity over the trials of a setting that count.
struct Spread {
  int count = 0;
  double mean = 0, min = 0, max = 0, stddev = 0;
};

struct SettingSummary {
  double setting = 0;
  bool baseline = false;
  int trials = 0;    // trials run at this setting
  int outliers = 0;  // of them flagged as outliers
  Spread time_s;
  Spread energy_j;
  std::optional<Spread> avg_power_w;
  std::optional<Spread> throughput;
  std::optional<Spread> energy_per_unit_j;
  std::optional<double> temperature_mean_c;
  std::optional<double> sm_clock_mean_mhz;
};

// One selector's choice, with the change against the baseline setting.
struct Recommendation {
  std::string selector;           // "min_energy", "min_edp", "min_energy_bounded", "zeus_cost"
  std::string title;              // "minimum energy with slowdown <= 10 %"
  std::optional<double> setting;  // nullopt when no setting qualifies
  double energy_j = 0;
  double time_s = 0;
  double energy_saving_pct = 0;  // (E_baseline - E) / E_baseline * 100
  double time_change_pct = 0;    // (T - T_baseline) / T_baseline * 100 (positive: slower)
  std::string note;
};

// A GPU's settings before the sweep changed anything: what --restore puts back.
struct RestoreEntry {
  unsigned index = 0;
  std::string uuid;
  unsigned power_limit_mw = 0;
  bool clocks_locked = false;  // whether the sweep may have locked clocks (reset them)
};

struct RestoreRecord {
  int version = 1;
  std::int64_t created_unix_ns = 0;
  int pid = 0;
  std::string host;
  std::string output;    // the sweep database
  std::string simulate;  // the backend, so that --restore talks to the same GPUs
  std::string nvml_library;
  std::vector<RestoreEntry> gpus;
};

// Everything the sweep database holds besides the trials' runs.
struct SweepRecord {
  Knob knob = Knob::PowerLimit;
  std::vector<std::string> command;
  std::vector<unsigned> gpus;  // NVML indices
  int repeat = 1;
  double warmup_s = 0;
  double max_slowdown = 0.10;  // fraction
  double eta = 0.5;            // Zeus's weight of energy
  double p_max_w = 0;          // Zeus's P_max: the sum of the GPUs' maximum power limits
  std::string work_source;     // "regex: ...", "units: N" or ""
  std::string window_begin;    // --window-begin, --window-end ("" when not given)
  std::string window_end;
  SweepStatus status = SweepStatus::Finished;
  std::int64_t start_unix_ns = 0;
  std::int64_t end_unix_ns = 0;
  std::vector<Setting> plan;
  std::vector<Trial> trials;
  std::vector<SettingSummary> summaries;
  std::vector<Recommendation> recommendations;
  RestoreRecord restore;
  bool restored = false;
  std::vector<std::string> notes;
};

}  // namespace gpuscope::sweep
