// One trial of a sweep: the command run once as an ordinary profiled run (sampler, run writer,
// launcher: the machinery of `gpuscope profile`), with the energy counters read all through it
// and taken at the edges of the measured window (the job's start and end, or the moments its
// own begin and end markers name).
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <mutex>

#include "analyze/work_units.hpp"
#include "app/profile/profiled_run.hpp"
#include "app/profile/run_context.hpp"
#include "app/profile/run_sink.hpp"
#include "app/sweep/sweep_options.hpp"
#include "collect/sampler.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/event_kinds.hpp"
#include "core/regex_limits.hpp"
#include "launch/job.hpp"
#include "sweep/window.hpp"

namespace gpuscope::app {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// Passes every row on to the run database and keeps, per GPU, what the trial table reports from
// the samples: temperature, SM clock and power (for GPUs without an energy counter). The window
// is applied at the end, once its edges are known (a job's begin marker may carry a time stamp
// older than the samples that arrived since).
class TrialSink : public collect::SampleSink {
 public:
  TrialSink(RunSink& inner, std::vector<unsigned> indices)
      : inner_(inner), indices_(std::move(indices)), per_device_(indices_.size()) {}

  void on_sample(const SampleRow& row) override {
    inner_.on_sample(row);
    std::lock_guard lock(mutex_);
    auto& rows = slot(row.device_index);
    if (rows.size() >= kMaxRows) {
      // Every other row goes: memory stays bounded however long the trial, the means barely move.
      std::size_t kept = 0;
      for (std::size_t i = 0; i < rows.size(); i += 2) rows[kept++] = rows[i];
      rows.resize(kept);
    }
    rows.push_back({row.mono_ns, row.get(Metric::TemperatureC), row.get(Metric::SmClockMhz),
                    row.get(Metric::PowerW)});
  }
  void on_power(const PowerRow& row) override { inner_.on_power(row); }
  void on_event(const Event& event) override { inner_.on_event(event); }

  struct Totals {
    std::optional<double> temperature_mean_c, temperature_max_c, sm_clock_mean_mhz;
    double power_integral_j = 0;
    bool power_everywhere = true;  // every GPU has two or more power samples in the window
  };
  // Over the samples taken in [start_ns, end_ns] (CLOCK_MONOTONIC).
  Totals totals(std::int64_t start_ns, std::int64_t end_ns) const {
    std::lock_guard lock(mutex_);
    Totals t;
    double temperature = 0, clock = 0, max_t = 0;
    int temperatures = 0, clocks = 0;
    for (const auto& rows : per_device_) {
      int powers = 0;
      std::optional<std::pair<std::int64_t, double>> last_power;
      for (const auto& r : rows) {
        if (r.mono_ns < start_ns || r.mono_ns > end_ns) continue;
        if (r.temperature_c) {
          temperature += *r.temperature_c;
          max_t = temperatures == 0 ? *r.temperature_c : std::max(max_t, *r.temperature_c);
          ++temperatures;
        }
        if (r.sm_clock_mhz) {
          clock += *r.sm_clock_mhz;
          ++clocks;
        }
        if (r.power_w) {
          if (last_power) {
            t.power_integral_j += (*r.power_w + last_power->second) / 2 *
                                  static_cast<double>(r.mono_ns - last_power->first) / 1e9;
          }
          last_power = {r.mono_ns, *r.power_w};
          ++powers;
        }
      }
      t.power_everywhere &= powers >= 2;
    }
    if (temperatures > 0) {
      t.temperature_mean_c = temperature / temperatures;
      t.temperature_max_c = max_t;
    }
    if (clocks > 0) t.sm_clock_mean_mhz = clock / clocks;
    return t;
  }

 private:
  static constexpr std::size_t kMaxRows = 16384;
  struct Row {
    std::int64_t mono_ns;
    std::optional<double> temperature_c, sm_clock_mhz, power_w;
  };
  std::vector<Row>& slot(unsigned device_index) {
    for (std::size_t i = 0; i < indices_.size(); ++i) {
      if (indices_[i] == device_index) return per_device_[i];
    }
    return per_device_.front();
  }

  RunSink& inner_;
  std::vector<unsigned> indices_;
  mutable std::mutex mutex_;
  std::vector<std::vector<Row>> per_device_;
};

// The selected GPUs' energy counters, read all through the trial, so that the energy of any
// window inside it is the counters' difference at exactly its edges (sweep::CounterTrack).
class EnergyReadings {
 public:
  explicit EnergyReadings(const TrialSetup& setup) : gpus_(*setup.controls) {
    tracks_.resize(gpus_.size());
  }

  // Reads every counter; after one failure no more (the energy then comes from sampled power).
  void read() {
    if (!ok_) return;
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      const auto reading = read_counter(*gpus_[i]);
      if (!reading) {
        ok_ = false;
        return;
      }
      tracks_[i].add(reading->first, reading->second);
    }
  }

  // The counters' sum at mono_ns (mJ); nullopt when a counter could not be read.
  std::optional<double> at(std::int64_t mono_ns) const {
    if (!ok_) return std::nullopt;
    double total = 0;
    for (const auto& track : tracks_) {
      const auto value = track.at(mono_ns);
      if (!value) return std::nullopt;
      total += *value;
    }
    return total;
  }

 private:
  // One reading and the monotonic time in the middle of the call. A call that took long (the
  // thread was preempted) says little about when the counter was read: it is tried again, and
  // the tightest of up to four is kept.
  static std::optional<std::pair<std::int64_t, double>> read_counter(collect::GpuControl& gpu) {
    std::optional<std::pair<std::int64_t, double>> best;
    std::int64_t best_span = 0;
    for (int attempt = 0; attempt < 4; ++attempt) {
      const std::int64_t before = mono_now_ns();
      const auto mj = gpu.energy_mj();
      const std::int64_t after = mono_now_ns();
      if (!mj) return std::nullopt;
      if (!best || after - before < best_span) {
        best = std::pair{before + (after - before) / 2, *mj};
        best_span = after - before;
      }
      if (best_span <= 1'000'000) break;
    }
    return best;
  }

  collect::GpuControls& gpus_;
  std::vector<sweep::CounterTrack> tracks_;
  bool ok_ = true;
};

std::optional<int> signal_from_detail(const std::string& detail) {
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    const std::string name = s == SIGINT    ? "SIGINT"
                             : s == SIGTERM ? "SIGTERM"
                             : s == SIGHUP  ? "SIGHUP"
                                            : "SIGQUIT";
    if (detail.rfind(name, 0) == 0) return s;
  }
  return std::nullopt;
}

// The measured window of one trial: from the job's start plus the warmup, or from the begin
// marker, to the job's end or the end marker. Its edges are known only afterwards (a marker's
// time stamp is older than its line's arrival), so the energy counters are read all along and
// taken at the edges; the work units are counted from the lines inside it.
class TrialWindow {
 public:
  TrialWindow(const TrialSetup& setup, EnergyReadings& energy)
      : setup_(setup),
        energy_(energy),
        warmup_ns_(static_cast<std::int64_t>(setup.options->warmup_s * 1e9)) {}

  void job_started(std::int64_t mono_ns) { job_start_mono_ = mono_ns; }

  // Each output line of the job, in order.
  void on_output(const OutputLine& line) {
    if (ended_) return;
    std::smatch match;
    if (setup_.window_begin && !begun_) {
      if (std::regex_search(line.text.begin(), matched_end(line.text), match,
                            *setup_.window_begin)) {
        energy_.read();
        begun_ = true;
        begin_ns_ = marker_at(match, line, "--window-begin");
      }
      return;  // the work of the lines up to the begin marker is not measured
    }
    if (!setup_.window_begin && line.mono_ns < job_start_mono_ + warmup_ns_) return;
    const bool closing =
        setup_.window_end &&
        std::regex_search(line.text.begin(), matched_end(line.text), match, *setup_.window_end);
    if (setup_.work_regex) {
      if (auto amount = analyze::work_in_line(*setup_.work_regex, line.text)) {
        units_ += *amount;
        any_units_ = true;
      }
    }
    if (closing) {
      energy_.read();
      ended_ = true;
      end_ns_ = marker_at(match, line, "--window-end");
    }
  }

  // How often the energy counters must be read while the job runs.
  std::chrono::milliseconds read_interval() const {
    return std::chrono::milliseconds(
        warmup_ns_ > 0 || setup_.window_begin || setup_.window_end ? 20 : 1000);
  }

  std::int64_t start() const {
    return setup_.window_begin ? begin_ns_ : job_start_mono_ + warmup_ns_;
  }
  std::int64_t end(std::int64_t job_end_mono) const { return ended_ ? end_ns_ : job_end_mono; }
  bool measurable(std::int64_t job_end_mono) const {
    return job_start_mono_ != 0 && (!setup_.window_begin || begun_) && end(job_end_mono) > start();
  }

  // Why the trial cannot be measured, or empty when it can (the job itself succeeded).
  std::string problem(std::int64_t job_end_mono) const {
    const SweepOptions& o = *setup_.options;
    if (setup_.window_begin && !begun_) {
      return fmt::format("printed no line matching --window-begin '{}'", o.window_begin);
    }
    if (setup_.window_end && !ended_) {
      return fmt::format("printed no line matching --window-end '{}'{}", o.window_end,
                         setup_.window_begin ? " after its begin marker" : "");
    }
    if (!measurable(job_end_mono)) {
      return warmup_ns_ > 0 && !setup_.window_begin
                 ? fmt::format("ended before the {:g} s warmup was over", o.warmup_s)
                 : std::string("marked an empty window (its end is not after its begin)");
    }
    return {};
  }

  std::optional<double> units() const {
    return any_units_ ? std::optional<double>(units_) : std::nullopt;
  }

 private:
  std::int64_t marker_at(const std::smatch& match, const OutputLine& line, const char* option) {
    const sweep::MarkerTime t = sweep::marker_time(match, job_start_mono_, line.mono_ns);
    if (!t.problem.empty() && !stamp_warned_) {
      stamp_warned_ = true;
      fmt::print(stderr, "gpuscope: {}: {}; the line's arrival time is used\n", option, t.problem);
    }
    return t.mono_ns;
  }

  const TrialSetup& setup_;
  EnergyReadings& energy_;
  std::int64_t warmup_ns_;
  std::int64_t job_start_mono_ = 0;
  bool begun_ = false, ended_ = false, stamp_warned_ = false;
  std::int64_t begin_ns_ = 0, end_ns_ = 0;
  double units_ = 0;
  bool any_units_ = false;
};

// The trial's measurements over [start, end] (CLOCK_MONOTONIC): energy from the counters at the
// edges, else from sampled power; throughput and energy per unit of work; temperatures, clocks.
void measure_trial(const SweepOptions& o, const TrialSink& sink, const EnergyReadings& energy,
                   std::int64_t start, std::int64_t end, std::optional<double> units,
                   sweep::Trial& trial) {
  trial.time_s = static_cast<double>(end - start) / 1e9;
  const auto totals = sink.totals(start, end);
  const auto energy_start_mj = energy.at(start);
  const auto energy_end_mj = energy.at(end);
  if (energy_start_mj && energy_end_mj) {
    trial.energy_j = (*energy_end_mj - *energy_start_mj) / 1000.0;
    trial.energy_source = "counter";
  } else if (totals.power_everywhere) {
    trial.energy_j = totals.power_integral_j;
    trial.energy_source = "sampled power";
  }
  if (trial.energy_j && trial.time_s > 0) trial.avg_power_w = *trial.energy_j / trial.time_s;
  trial.work_units = o.work_units ? o.work_units : units;
  if (trial.work_units && *trial.work_units > 0 && trial.time_s > 0) {
    trial.throughput = *trial.work_units / trial.time_s;
    if (trial.energy_j) trial.energy_per_unit_j = *trial.energy_j / *trial.work_units;
  }
  trial.temperature_mean_c = totals.temperature_mean_c;
  trial.temperature_max_c = totals.temperature_max_c;
  trial.sm_clock_mean_mhz = totals.sm_clock_mean_mhz;
}

}  // namespace

TrialEnd run_trial(const TrialSetup& setup, sweep::Trial& trial, const std::filesystem::path& db) {
  const SweepOptions& o = *setup.options;
  ProfiledRunSetup run_setup;
  run_setup.gpus = setup.node;
  run_setup.backend = o.backend;
  run_setup.indices = setup.indices;
  run_setup.devices = setup.devices;
  run_setup.info = setup.run_template;
  run_setup.info.label = fmt::format("sweep {} {:g} {} repeat {}", sweep::knob_name(setup.knob),
                                     trial.setting, sweep::knob_unit(setup.knob), trial.repeat);
  run_setup.info.start_wall_ns = wall_now_ns();
  run_setup.info.start_mono_ns = mono_now_ns();
  run_setup.output = db;
  run_setup.force = true;  // the sweep's own folder of trial databases
  run_setup.sampler = {
      duration_cast<nanoseconds>(std::chrono::duration<double, std::milli>(o.sampling_ms)),
      nanoseconds(0)};
  ProfiledRun run(std::move(run_setup));
  TrialSink sink(run.sink(), setup.indices);

  launch::LaunchOptions launch_options;
  launch_options.argv = o.command;
  launch_options.capture_output = true;
  // The job gets no terminal of its own: Ctrl-C reaches gpuscope, which passes it on and ends
  // the sweep, whatever the job does with it.
  launch_options.job_control = false;

  EnergyReadings energy(setup);
  TrialWindow window(setup, energy);
  std::optional<int> interrupt;
  launch::JobCallbacks callbacks;
  callbacks.on_output = [&](const OutputLine& line) { window.on_output(line); };  // once stored
  callbacks.on_event = [&](const Event& event) {  // after `sink` has it
    if (event.kind == EventKind::Signal && !interrupt) interrupt = signal_from_detail(event.detail);
  };
  callbacks.on_tick = [&] { energy.read(); };
  callbacks.tick_interval = window.read_interval();

  energy.read();
  const launch::JobResult result =
      run.run(launch_options, sink, callbacks, [&](std::int64_t t) { window.job_started(t); });
  energy.read();
  const std::int64_t end_mono = result.end_mono_ns != 0 ? result.end_mono_ns : mono_now_ns();
  RunEnd end = run.end(result);
  for (const auto& p : run.store_end(end)) fmt::print(stderr, "gpuscope: {}\n", p);

  TrialEnd out;
  out.exit_code = result.exit_code;
  out.description = launch::describe_exit(result);
  if (!interrupt && result.term_signal &&
      (*result.term_signal == SIGINT || *result.term_signal == SIGTERM)) {
    // A Ctrl-C at the terminal may reach the job directly: the sweep stops just the same.
    interrupt = result.term_signal;
  }
  out.interrupt_signal = interrupt;
  trial.exit_code = result.exit_code;
  const std::string problem = window.problem(end_mono);
  if (interrupt) {
    trial.status = sweep::TrialStatus::Interrupted;
  } else if (result.status != RunStatus::Finished || result.exit_code != 0) {
    trial.status = sweep::TrialStatus::Failed;
  } else if (!problem.empty()) {
    trial.status = sweep::TrialStatus::Failed;
    out.description = problem;
  } else {
    trial.status = sweep::TrialStatus::Ok;
  }
  if (window.measurable(end_mono)) {
    measure_trial(o, sink, energy, window.start(), window.end(end_mono), window.units(), trial);
  }
  return out;
}

}  // namespace gpuscope::app
