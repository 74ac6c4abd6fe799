// `gpuscope sweep`: the plan, the permission check, the restore record, the trials, the
// restore on every path, and the sweep database (docs/sweep.md).
#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <ctime>
#include <filesystem>

#include "analyze/work_units.hpp"
#include "app/profile/run_context.hpp"
#include "app/sweep/gpu_settings.hpp"
#include "app/sweep/sweep_mig.hpp"
#include "app/sweep/sweep_options.hpp"
#include "collect/backend.hpp"
#include "collect/gpu_control.hpp"
#include "collect/gpu_selection.hpp"
#include "collect/node_gpus.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "launch/signals.hpp"
#include "ranks/rank_context.hpp"
#include "store/merge.hpp"
#include "store/run_file.hpp"
#include "store/sweep_tables.hpp"
#include "sweep/plan.hpp"
#include "sweep/restore_record.hpp"
#include "sweep/selection.hpp"
#include "sweep/window.hpp"
#include "util/command_line.hpp"
#include "util/number_text.hpp"

namespace gpuscope::app {

double parse_slowdown(const std::string& text) {
  std::string t;
  for (char c : text) {
    if (c != ' ') t += c;
  }
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  double value = util::parse_finite_number(t).value_or(-1);
  if (percent || value > 1) value /= 100;
  if (!(value >= 0) || value > 10) {
    throw Error::usage(fmt::format("--max-slowdown '{}' is not a slowdown", text), {},
                       "give a percentage such as 10% (or a fraction such as 0.1)");
  }
  return value;
}

void validate(const SweepOptions& o) {
  if (o.restore) return;
  if (o.power_limits.empty() == o.clocks.empty()) {
    throw Error::usage("give one of --power-limits and --clocks", {},
                       "e.g. --power-limits 200:700:50 or --clocks 900:1980:180");
  }
  if (o.command.empty()) {
    throw Error::usage("no command to sweep", {},
                       "put it after --: gpuscope sweep ... -- CMD ARGS");
  }
  if (o.repeat < 1 || o.repeat > 1000) throw Error::usage("--repeat must be between 1 and 1000");
  if (o.warmup_s < 0) throw Error::usage("--warmup must not be negative");
  if (o.settle_s < 0) throw Error::usage("--settle must not be negative");
  if (o.eta < 0 || o.eta > 1) throw Error::usage("--eta must be between 0 and 1");
  if (o.sampling_ms < 10) throw Error::usage("--sampling-ms must be at least 10");
  if (!o.work_regex.empty() && o.work_units) {
    throw Error::usage("--work-regex and --work-units cannot be combined");
  }
  if (o.work_units && *o.work_units <= 0) throw Error::usage("--work-units must be positive");
  if (!o.window_begin.empty() && o.warmup_s > 0) {
    throw Error::usage("--warmup and --window-begin cannot be combined", {},
                       "let the job print its begin marker once its warmup is over");
  }
}

namespace {

namespace fs = std::filesystem;
using sweep::Knob;

// The GPUs a sweep changes: --gpus, else those the job may see (ROCm's variables on a node with
// AMD GPUs, CUDA_VISIBLE_DEVICES and the schedulers' on NVIDIA's), else all.
std::vector<unsigned> choose_gpus(const SweepOptions& o, const collect::NodeGpus& node) {
  const auto& devices = node.system.devices;
  const collect::MigResolver mig = collect::mig_resolver(node);
  const auto env = ranks::process_environment();
  collect::GpuSelection selection;
  if (!o.gpus.empty()) {
    selection = collect::select_gpus(o.gpus, devices, mig);
  } else if (auto amd = collect::amd_visible(env, devices)) {
    selection = *std::move(amd);
  } else if (auto visible = ranks::visible_gpus(env)) {
    selection = collect::select_visible_gpus(visible->list, visible->source, devices, mig);
  } else {
    selection = collect::select_gpus("all", devices, mig);
  }
  for (const auto& note : selection.notes) fmt::print(stderr, "gpuscope: {}\n", note);
  if (selection.indices.empty()) {
    throw Error::usage("no GPU selected", {}, "check --gpus and gpuscope devices");
  }
  // A GPU in MIG mode shared with others: refused.
  check_mig_gpus(node, selection, devices);
  return selection.indices;
}

// Waits `seconds`, returning early with the signal if one of the launcher's arrives.
std::optional<int> wait_for_signal(double seconds) {
  sigset_t set = launch::launcher_signal_set();
  sigdelset(&set, SIGCHLD);
  timespec timeout{};
  timeout.tv_sec = static_cast<time_t>(seconds);
  timeout.tv_nsec = static_cast<long>((seconds - std::floor(seconds)) * 1e9);
  while (true) {
    const int s = sigtimedwait(&set, nullptr, &timeout);
    if (s > 0) {
      if (s == SIGUSR1 || s == SIGUSR2) continue;  // meant for a job; there is none now
      return s;
    }
    if (errno == EINTR) continue;
    return std::nullopt;
  }
}

std::string setting_text(double value, Knob knob, bool baseline) {
  if (knob == Knob::SmClock && baseline) return "unlocked";
  return fmt::format("{:g} {}{}", value, sweep::knob_unit(knob), baseline ? " (default)" : "");
}

void print_plan(std::FILE* to, const SweepOptions& o, Knob knob,
                const std::vector<sweep::Setting>& plan, const SettingLimits& limits,
                const std::vector<unsigned>& indices,
                const std::vector<DeviceDescription>& devices) {
  std::string gpus;
  for (unsigned i : indices) {
    gpus +=
        fmt::format("{}GPU {} ({})", gpus.empty() ? "" : ", ", i, devices.at(i).name.value_or("?"));
  }
  std::string settings;
  for (const auto& s : plan) {
    settings += (settings.empty() ? "" : ", ") + setting_text(s.value, knob, s.baseline);
  }
  const std::size_t trials = plan.size() * static_cast<std::size_t>(o.repeat);
  fmt::print(to, "gpuscope sweep plan: {} on {}\n",
             knob == Knob::PowerLimit ? "power limit" : "locked SM clock", gpus);
  fmt::print(to, "  settings   {}\n", settings);
  fmt::print(to, "  trials     {} settings × {} repeat{} = {} runs of: {}\n", plan.size(), o.repeat,
             o.repeat == 1 ? "" : "s", trials, util::shell_command_line(o.command));
  if (knob == Knob::PowerLimit) {
    fmt::print(to, "  range      {:g}–{:g} W (default {:g} W)\n", limits.min, limits.max,
               limits.baseline);
  } else {
    fmt::print(to, "  range      up to {:g} MHz (baseline: clocks unlocked)\n", limits.max);
  }
  fmt::print(to, "  each trial settle {:g} s after the change, warmup {:g} s not measured\n",
             o.settle_s, o.warmup_s);
  if (!o.window_begin.empty() || !o.window_end.empty()) {
    fmt::print(to, "  window     from {} to {}\n",
               o.window_begin.empty() ? "the job's start" : "'" + o.window_begin + "'",
               o.window_end.empty() ? "the job's end" : "'" + o.window_end + "'");
  }
  fmt::print(to, "  output     {}\n", o.output);
}

int run_restore_command(const SweepOptions& o) {
  const fs::path path = sweep::restore_record_path(o.output);
  const auto record = sweep::read_restore_record(path);
  if (!record) {
    fmt::print(stderr, "gpuscope: no restore record at {}: nothing to restore\n", path.string());
    return 0;
  }
  if (record->host == short_host_name() && record->pid > 0 && record->pid != getpid() &&
      kill(record->pid, 0) == 0) {
    throw Error(fmt::format("the sweep that wrote {} (pid {}) is still running", path.string(),
                            record->pid),
                {}, "stop it with Ctrl-C or kill -TERM: it restores the GPUs itself");
  }
  collect::BackendOptions backend = o.backend;
  if (backend.simulate.empty() && backend.nvml_library.empty()) {
    backend.simulate = record->simulate;
    backend.nvml_library = record->nvml_library;
  }
  const collect::NodeGpus node = collect::open_node_gpus(backend);
  const collect::GpuControls gpus = collect::open_all_controls(node);
  const auto problems = restore_gpus(gpus, *record, true);
  if (!problems.empty()) {
    for (const auto& p : problems) fmt::print(stderr, "gpuscope: error: {}\n", p);
    throw Error(fmt::format("could not restore every GPU from {}", path.string()), {},
                "the record is kept; fix the problem and run --restore again, or set the limits "
                "by hand (nvidia-smi -pl W and -rgc; on AMD GPUs, amd-smi set's power cap)");
  }
  std::error_code ignored;
  fs::remove(path, ignored);
  fmt::print(stderr, "gpuscope: restored {} GPU{} from {}\n", record->gpus.size(),
             record->gpus.size() == 1 ? "" : "s", path.string());
  return 0;
}

// Merges the trials' run files into the sweep database and adds the sweep tables.
void write_database(const SweepOptions& o, sweep::SweepRecord& record,
                    const std::vector<fs::path>& trial_files) {
  const fs::path output = o.output;
  if (trial_files.empty()) {
    store::create_empty_run_file(output);
  } else {
    store::merge(output, trial_files, true);
  }
  // merge numbers runs in input order, from 1: the trials that ran, in order.
  std::int64_t run_id = 0;
  for (auto& t : record.trials) {
    if (t.status != sweep::TrialStatus::Planned) t.run_id = ++run_id;
  }
  store::write_sweep_tables(output, record);
}

// The options turned into what the sweep runs on: checked before any GPU is touched.
struct SweepInputs {
  Knob knob = Knob::PowerLimit;
  std::vector<double> values;
  double max_slowdown = 0;
  std::optional<std::regex> work_regex, window_begin, window_end;
};

SweepInputs parse_inputs(const SweepOptions& o) {
  SweepInputs in;
  in.knob = o.power_limits.empty() ? Knob::SmClock : Knob::PowerLimit;
  const std::string option = in.knob == Knob::PowerLimit ? "--power-limits" : "--clocks";
  in.values =
      sweep::parse_settings(in.knob == Knob::PowerLimit ? o.power_limits : o.clocks, option);
  in.max_slowdown = parse_slowdown(o.max_slowdown);
  if (!o.work_regex.empty()) in.work_regex = analyze::compile_work_regex(o.work_regex);
  if (!o.window_begin.empty()) {
    in.window_begin = sweep::compile_marker(o.window_begin, "--window-begin");
  }
  if (!o.window_end.empty()) in.window_end = sweep::compile_marker(o.window_end, "--window-end");
  return in;
}

// The sweep as it will be stored, its restore record included (absolute paths: `sweep
// --restore` may run from any folder, and after a reboot).
sweep::SweepRecord make_record(const SweepOptions& o, const SweepInputs& in,
                               const std::vector<unsigned>& indices,
                               const std::vector<sweep::Setting>& plan,
                               const SettingLimits& limits) {
  sweep::SweepRecord record;
  record.knob = in.knob;
  record.command = o.command;
  record.gpus = indices;
  record.repeat = o.repeat;
  record.warmup_s = o.warmup_s;
  record.max_slowdown = in.max_slowdown;
  record.eta = o.eta;
  record.p_max_w = limits.p_max_w;
  record.work_source = !o.work_regex.empty()
                           ? "regex: " + o.work_regex
                           : (o.work_units ? fmt::format("units: {:g}", *o.work_units) : "");
  record.window_begin = o.window_begin;
  record.window_end = o.window_end;
  record.start_unix_ns = wall_now_ns();
  record.plan = plan;
  record.trials = sweep::plan_trials(plan, o.repeat);
  record.notes = limits.notes;
  record.restore.created_unix_ns = wall_now_ns();
  record.restore.pid = getpid();
  record.restore.host = short_host_name();
  record.restore.output = fs::absolute(o.output).string();
  if (!o.backend.simulate.empty()) {
    record.restore.simulate = fs::absolute(collect::resolve_scenario(o.backend.simulate)).string();
  }
  record.restore.nvml_library = o.backend.nvml_library.find('/') == std::string::npos
                                    ? o.backend.nvml_library  // a soname: dlopen searches for it
                                    : fs::absolute(o.backend.nvml_library).string();
  record.restore.gpus = limits.now;
  return record;
}

TrialSetup make_trial_setup(const SweepOptions& o, const SweepInputs& in,
                            const collect::NodeGpus& node, collect::GpuControls& controls,
                            const std::vector<unsigned>& indices) {
  const SystemDescription& system = node.system;
  TrialSetup setup;
  setup.options = &o;
  setup.node = &node;
  setup.controls = &controls;
  setup.indices = indices;
  for (unsigned i : indices) setup.devices.push_back(collect::device_at(system.devices, i));
  setup.run_template.command = o.command;
  setup.run_template.host = short_host_name();
  setup.run_template.user = user_name();
  setup.run_template.tool_version = kVersion;
  setup.run_template.sampling_interval_ns = static_cast<std::int64_t>(o.sampling_ms * 1e6);
  if (!o.backend.simulate.empty()) setup.run_template.scenario = o.backend.simulate;
  setup.run_template.driver_version = system.driver_version;
  setup.work_regex = in.work_regex;
  setup.window_begin = in.window_begin;
  setup.window_end = in.window_end;
  setup.knob = in.knob;
  return setup;
}

// How the trials ended: the sweep's status and exit code, and the trials' run databases.
struct TrialsEnd {
  sweep::SweepStatus status = sweep::SweepStatus::Finished;
  int exit_code = 0;
  std::vector<fs::path> files;
};

TrialsEnd run_trials(const SweepOptions& o, const TrialSetup& setup, const SettingLimits& limits,
                     sweep::SweepRecord& record, const fs::path& trials_dir) {
  TrialsEnd out;
  const Knob knob = setup.knob;
  std::optional<int> interrupt;
  const std::size_t count = record.trials.size();
  for (auto& trial : record.trials) {
    if ((interrupt = wait_for_signal(0))) break;
    if (trial.baseline) {
      apply_baseline(*setup.controls, knob, limits);
    } else {
      apply_setting(*setup.controls, knob, trial.setting);
    }
    if ((interrupt = wait_for_signal(o.settle_s))) break;
    const fs::path db = trials_dir / fmt::format("trial-{:04}.db", trial.number);
    if (!o.quiet) {
      fmt::print(stderr, "gpuscope: trial {}/{}: {}, repeat {}\n", trial.number, count,
                 setting_text(trial.setting, knob, trial.baseline), trial.repeat);
    }
    const TrialEnd end = run_trial(setup, trial, db);
    out.files.push_back(db);
    if (!o.quiet && trial.status == sweep::TrialStatus::Ok) {
      fmt::print(stderr, "gpuscope:   {:.2f} s, {}{}\n", trial.time_s,
                 trial.energy_j ? fmt::format("{:.0f} J, {:.0f} W average", *trial.energy_j,
                                              trial.avg_power_w.value_or(0))
                                : "energy unknown",
                 trial.throughput ? fmt::format(", {:.4g} units/s", *trial.throughput) : "");
    }
    if (end.interrupt_signal) {
      interrupt = end.interrupt_signal;
      break;
    }
    if (trial.status != sweep::TrialStatus::Ok) {
      out.status = sweep::SweepStatus::Failed;
      out.exit_code = end.exit_code != 0 ? end.exit_code : 1;
      fmt::print(stderr, "gpuscope: error: trial {} ({}): the job {}; the sweep stops\n",
                 trial.number, setting_text(trial.setting, knob, trial.baseline), end.description);
      break;
    }
  }
  if (interrupt) {
    out.status = sweep::SweepStatus::Interrupted;
    out.exit_code = 128 + *interrupt;
    fmt::print(stderr, "gpuscope: {} received: the sweep stops\n", launch::signal_name(*interrupt));
  }
  return out;
}

// After the GPUs are restored: the summaries and recommendations, then every output, each
// attempted whatever fails first; the failures are reported after. Returns the exit code.
int write_results(const SweepOptions& o, const SweepInputs& in, const SettingLimits& limits,
                  sweep::SweepRecord& record, const TrialsEnd& trials, const fs::path& trials_dir) {
  record.status = trials.status;
  record.end_unix_ns = wall_now_ns();
  sweep::mark_outliers(record.trials);
  record.summaries = sweep::summarize(record.plan, record.trials);
  if (trials.status == sweep::SweepStatus::Finished) {
    record.recommendations =
        sweep::recommend(record.summaries, {in.max_slowdown, o.eta, limits.p_max_w});
  }
  std::vector<std::string> failures;
  bool database_written = false;
  const fs::path output = o.output;
  try {
    write_database(o, record, trials.files);
    database_written = true;
    std::error_code ignored;
    fs::remove_all(trials_dir, ignored);  // only once their runs are in the sweep database
  } catch (const std::exception& e) {
    failures.push_back(
        fmt::format("the sweep database {} was not written: {} (the trials' run "
                    "databases are kept in {})",
                    output.string(), e.what(), trials_dir.string()));
  }
  SweepOutputs outputs = write_sweep_outputs(record, output, database_written, o.quiet);
  failures.insert(failures.end(), outputs.failures.begin(), outputs.failures.end());
  for (const std::string& failure : failures) {
    fmt::print(stderr, "gpuscope: error: {}\n", failure);
  }
  int exit_code = trials.exit_code;
  if (!failures.empty() && exit_code == 0) exit_code = 1;
  if (!record.restored && exit_code == 0) exit_code = 1;
  return exit_code;
}

}  // namespace

int run_sweep(const SweepOptions& o) {
  // First, before NVML or the sampler start any thread (launch/signals.hpp).
  launch::SignalGuard signal_guard;
  validate(o);
  if (o.restore) return run_restore_command(o);
  const SweepInputs in = parse_inputs(o);

  const fs::path output = o.output;
  const fs::path record_path = sweep::restore_record_path(output);
  if (!o.dry_run) {
    if (fs::exists(record_path)) {
      throw Error::usage(fmt::format("{} exists: an earlier sweep into {} did not restore the GPUs",
                                     record_path.string(), o.output),
                         {}, fmt::format("run 'gpuscope sweep --restore -o {}' first", o.output));
    }
    store::check_output_path(output, o.force);
  }

  const collect::NodeGpus node = collect::open_node_gpus(o.backend);
  for (const auto& note : node.notes) fmt::print(stderr, "gpuscope: {}\n", note);
  const SystemDescription& system = node.system;
  const auto indices = choose_gpus(o, node);
  collect::GpuControls controls = collect::open_controls(node, indices);
  const SettingLimits limits = read_setting_limits(controls, in.knob);
  for (const auto& note : limits.notes) fmt::print(stderr, "gpuscope: {}\n", note);
  if (in.knob == Knob::PowerLimit) {
    sweep::check_range(in.values, limits.min, limits.max, "W", "power limit");
  } else {
    sweep::check_range(in.values, 1, limits.max, "MHz", "SM clock");
  }
  const auto plan = sweep::make_plan(in.values, limits.baseline);

  if (o.dry_run) {
    print_plan(stdout, o, in.knob, plan, limits, indices, system.devices);
    std::fflush(stdout);
    check_setting_permission(controls, limits, in.knob);
    fmt::print("  permission to set {}: yes\n",
               in.knob == Knob::PowerLimit ? "power limits" : "locked clocks");
    fmt::print("dry run: nothing was changed\n");
    return 0;
  }
  check_setting_permission(controls, limits, in.knob);
  if (!o.quiet) print_plan(stderr, o, in.knob, plan, limits, indices, system.devices);
  sweep::SweepRecord record = make_record(o, in, indices, plan, limits);

  // Nothing has changed yet. From here on, every way out goes through the guard.
  if (!output.parent_path().empty()) fs::create_directories(output.parent_path());
  sweep::write_restore_record(record_path, record.restore);
  RestoreGuard guard(controls, record.restore, record_path);
  if (!o.quiet) {
    fmt::print(stderr,
               "gpuscope: restore record {} written; should gpuscope be killed, run 'gpuscope "
               "sweep --restore -o {}'\n",
               record_path.string(), o.output);
  }
  const fs::path trials_dir = output.string() + ".trials";
  std::error_code ignored;
  fs::remove_all(trials_dir, ignored);
  fs::create_directories(trials_dir);

  const TrialSetup setup = make_trial_setup(o, in, node, controls, indices);
  const TrialsEnd trials = run_trials(o, setup, limits, record, trials_dir);
  // Restore first: the results can wait, the GPUs cannot.
  record.restored = guard.restore();
  return write_results(o, in, limits, record, trials, trials_dir);
}

}  // namespace gpuscope::app
