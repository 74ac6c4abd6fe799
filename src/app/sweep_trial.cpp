// One trial of a sweep: the command run once as an ordinary profiled run (sampler, run writer,
// launcher: the machinery of `gpuscope profile`), with the energy counters read all through it
// and taken at the edges of the measured window (the job's start and end, or the moments its
// own begin and end markers name).
#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "analyze/work_units.hpp"
#include "app/profiled_run.hpp"
#include "app/run_context.hpp"
#include "app/run_sink.hpp"
#include "app/sweep_options.hpp"
#include "collect/device_reader.hpp"
#include "collect/sampler.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/regex_limits.hpp"
#include "launch/job.hpp"
#include "store/run_writer.hpp"
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
  explicit EnergyReadings(const TrialSetup& setup) {
    for (unsigned index : setup.indices) devices_.push_back(setup.session->device(index));
    tracks_.resize(devices_.size());
  }

  // Reads every counter; after one failure no more (the energy then comes from sampled power).
  void read() {
    if (!ok_) return;
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      const auto reading = read_counter(devices_[i]);
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
  static std::optional<std::pair<std::int64_t, double>> read_counter(const nvml::Device& device) {
    std::optional<std::pair<std::int64_t, double>> best;
    std::int64_t best_span = 0;
    for (int attempt = 0; attempt < 4; ++attempt) {
      const std::int64_t before = mono_now_ns();
      const auto mj = device.total_energy_mj();
      const std::int64_t after = mono_now_ns();
      if (!mj) return std::nullopt;
      if (!best || after - before < best_span) {
        best = std::pair{before + (after - before) / 2, static_cast<double>(*mj)};
        best_span = after - before;
      }
      if (best_span <= 1'000'000) break;
    }
    return best;
  }

  std::vector<nvml::Device> devices_;
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

}  // namespace

TrialEnd run_trial(const TrialSetup& setup, sweep::Trial& trial, const std::filesystem::path& db) {
  const SweepOptions& o = *setup.options;
  RunInfo info = setup.run_template;
  info.label = fmt::format("sweep {} {:g} {} repeat {}", sweep::knob_name(setup.knob),
                           trial.setting, sweep::knob_unit(setup.knob), trial.repeat);
  info.start_wall_ns = wall_now_ns();
  info.start_mono_ns = mono_now_ns();

  ProfiledRunSetup run_setup;
  run_setup.session = setup.session;
  run_setup.indices = setup.indices;
  run_setup.devices = setup.devices;
  run_setup.info = info;
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

  // The window: from the job's start plus the warmup, or from the begin marker, to the job's end
  // or the end marker. Its edges are known only afterwards (a marker's time stamp is older than
  // its line's arrival), so the energy counters are read all along and taken at the edges.
  const std::int64_t warmup_ns = static_cast<std::int64_t>(o.warmup_s * 1e9);
  const bool markers = setup.window_begin || setup.window_end;
  EnergyReadings energy(setup);
  bool begun = false, ended = false;
  std::int64_t begin_ns = 0, end_ns = 0;
  bool stamp_warned = false;
  double units = 0;
  bool any_units = false;
  std::optional<int> interrupt;
  std::int64_t job_start_mono = 0;

  const auto marker_at = [&](const std::smatch& match, const OutputLine& line, const char* option) {
    const sweep::MarkerTime t = sweep::marker_time(match, job_start_mono, line.mono_ns);
    if (!t.problem.empty() && !stamp_warned) {
      stamp_warned = true;
      fmt::print(stderr, "gpuscope: {}: {}; the line's arrival time is used\n", option, t.problem);
    }
    return t.mono_ns;
  };

  launch::JobCallbacks callbacks;
  callbacks.on_output = [&](const OutputLine& line) {  // after the line is stored
    if (ended) return;
    std::smatch match;
    if (setup.window_begin && !begun) {
      if (std::regex_search(line.text.begin(), matched_end(line.text), match,
                            *setup.window_begin)) {
        energy.read();
        begun = true;
        begin_ns = marker_at(match, line, "--window-begin");
      }
      return;  // the work of the lines up to the begin marker is not measured
    }
    if (!setup.window_begin && line.mono_ns < job_start_mono + warmup_ns) return;
    const bool closing =
        setup.window_end &&
        std::regex_search(line.text.begin(), matched_end(line.text), match, *setup.window_end);
    if (setup.work_regex) {
      if (auto amount = analyze::work_in_line(*setup.work_regex, line.text)) {
        units += *amount;
        any_units = true;
      }
    }
    if (closing) {
      energy.read();
      ended = true;
      end_ns = marker_at(match, line, "--window-end");
    }
  };
  callbacks.on_event = [&](const Event& event) {  // after `sink` has it
    if (event.kind == "signal" && !interrupt) interrupt = signal_from_detail(event.detail);
  };
  callbacks.on_tick = [&] { energy.read(); };
  callbacks.tick_interval = milliseconds(warmup_ns > 0 || markers ? 20 : 1000);

  energy.read();
  const launch::JobResult result =
      run.run(launch_options, sink, callbacks, [&](std::int64_t start) { job_start_mono = start; });
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

  const std::int64_t window_start = setup.window_begin ? begin_ns : job_start_mono + warmup_ns;
  const std::int64_t window_end = ended ? end_ns : end_mono;
  const bool measurable =
      job_start_mono != 0 && (!setup.window_begin || begun) && window_end > window_start;
  if (interrupt) {
    trial.status = "interrupted";
  } else if (result.status != RunStatus::Finished || result.exit_code != 0) {
    trial.status = "failed";
  } else if (setup.window_begin && !begun) {
    trial.status = "failed";
    out.description = fmt::format("printed no line matching --window-begin '{}'", o.window_begin);
  } else if (setup.window_end && !ended) {
    trial.status = "failed";
    out.description = fmt::format("printed no line matching --window-end '{}'{}", o.window_end,
                                  setup.window_begin ? " after its begin marker" : "");
  } else if (!measurable) {
    trial.status = "failed";
    out.description = warmup_ns > 0 && !setup.window_begin
                          ? fmt::format("ended before the {:g} s warmup was over", o.warmup_s)
                          : std::string("marked an empty window (its end is not after its begin)");
  } else {
    trial.status = "ok";
  }
  if (!measurable) return out;

  trial.time_s = static_cast<double>(window_end - window_start) / 1e9;
  const auto totals = sink.totals(window_start, window_end);
  const auto energy_start_mj = energy.at(window_start);
  const auto energy_end_mj = energy.at(window_end);
  if (energy_start_mj && energy_end_mj) {
    trial.energy_j = (*energy_end_mj - *energy_start_mj) / 1000.0;
    trial.energy_source = "counter";
  } else if (totals.power_everywhere) {
    trial.energy_j = totals.power_integral_j;
    trial.energy_source = "sampled power";
  }
  if (trial.energy_j && trial.time_s > 0) trial.avg_power_w = *trial.energy_j / trial.time_s;
  if (o.work_units) {
    trial.work_units = *o.work_units;
  } else if (any_units) {
    trial.work_units = units;
  }
  if (trial.work_units && *trial.work_units > 0 && trial.time_s > 0) {
    trial.throughput = *trial.work_units / trial.time_s;
    if (trial.energy_j) trial.energy_per_unit_j = *trial.energy_j / *trial.work_units;
  }
  trial.temperature_mean_c = totals.temperature_mean_c;
  trial.temperature_max_c = totals.temperature_max_c;
  trial.sm_clock_mean_mhz = totals.sm_clock_mean_mhz;
  return out;
}

}  // namespace gpuscope::app
