// The options of `gpuscope sweep` and the pieces of its work shared between its files:
// sweep_command.cpp (command line), sweep_run.cpp (plan, limits, restore), sweep_trial.cpp
// (one profiled trial) and sweep_output.cpp (table, CSV, JSON, plot, HTML).
#pragma once

#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "collect/backend.hpp"
#include "collect/gpu_control.hpp"
#include "collect/node_gpus.hpp"
#include "core/device_description.hpp"
#include "core/run.hpp"
#include "core/sweep.hpp"

namespace gpuscope::app {

struct SweepOptions {
  collect::BackendOptions backend;
  std::string power_limits;  // "200:700:50" or "300,400,500" (W)
  std::string clocks;        // the same for locked SM clocks (MHz)
  std::string gpus;          // default: the GPUs the job may see, else all
  int repeat = 1;
  double warmup_s = 0;
  double settle_s = 1;
  std::string max_slowdown = "10%";
  double eta = 0.5;
  std::string work_regex;
  std::optional<double> work_units;
  std::string window_begin;  // a line of the job's output that marks where its work begins
  std::string window_end;    // ... and where it ends
  std::string output = "sweep.db";
  bool force = false;
  bool dry_run = false;
  bool restore = false;
  double sampling_ms = 100;
  bool quiet = false;
  std::vector<std::string> command;
};

int run_sweep(const SweepOptions& options);

// Throws Error::usage (exit code 2) for options that make no sense, before any GPU is touched.
void validate(const SweepOptions& options);
// --max-slowdown: "10%", "10 %", "10" or "0.1" → 0.1; Error::usage for anything else.
double parse_slowdown(const std::string& text);

// What every trial shares.
struct TrialSetup {
  const SweepOptions* options = nullptr;
  const collect::NodeGpus* node = nullptr;   // the node's GPUs, which outlive the sweep
  collect::GpuControls* controls = nullptr;  // the selected GPUs' controls, as `indices`
  std::vector<unsigned> indices;             // the selected GPUs
  std::vector<DeviceDescription> devices;    // their descriptions
  RunInfo run_template;                      // command, host, user, versions
  std::optional<std::regex> work_regex;
  std::optional<std::regex> window_begin, window_end;
  sweep::Knob knob = sweep::Knob::PowerLimit;
};

// How a trial's job ended, for the sweep: whether to go on.
struct TrialEnd {
  std::optional<int> interrupt_signal;  // SIGINT/SIGTERM/... received by gpuscope meanwhile
  int exit_code = 0;                    // the job's, as a shell reports it
  std::string description;              // "exited with code 3"
};

// Runs the command once as a profiled run written to `db` and fills `trial`'s measurements and
// status. Never throws for what the job does; throws Error when the run file cannot be made.
TrialEnd run_trial(const TrialSetup& setup, sweep::Trial& trial, const std::filesystem::path& db);

// What write_sweep_outputs wrote, and what it could not (one message each).
struct SweepOutputs {
  std::vector<std::filesystem::path> written;
  std::vector<std::string> failures;
};

// The sweep's results on stdout and beside the database (table, CSV, JSON, plot, HTML), each
// written independently of the others; never throws for an output that fails.
// database_written: whether `output` itself was written (it is then listed as written).
SweepOutputs write_sweep_outputs(const sweep::SweepRecord& record,
                                 const std::filesystem::path& output, bool database_written,
                                 bool quiet);

}  // namespace gpuscope::app
