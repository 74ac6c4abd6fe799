// One trial of a sweep: the command run once as an ordinary profiled run (sampler, run writer,
// launcher: the machinery of `gpuscope profile`), with the energy counter read at the edges of
// the measured window.
#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "analyze/work_units.hpp"
#include "cli/run_context.hpp"
#include "cli/run_sink.hpp"
#include "cli/sweep_options.hpp"
#include "collect/device_reader.hpp"
#include "collect/sampler.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "launch/job.hpp"
#include "store/run_writer.hpp"

namespace gpuscope::cli {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// Passes every row on to the run database and keeps, per GPU, what the trial table reports
// from the samples inside the measured window: temperature, SM clock and (for GPUs without an
// energy counter) power integrated over time.
class TrialSink : public collect::SampleSink {
 public:
  TrialSink(RunSink& inner, std::size_t devices) : inner_(inner), per_device_(devices) {}

  void start_window(std::int64_t mono_ns) { window_start_.store(mono_ns); }

  void on_sample(const SampleRow& row) override {
    inner_.on_sample(row);
    const std::int64_t start = window_start_.load();
    if (start == 0 || row.mono_ns < start) return;
    std::lock_guard lock(mutex_);
    auto& d = slot(row.device_index);
    if (auto t = row.get(Metric::TemperatureC)) {
      d.temperature_sum += *t;
      d.temperature_max = std::max(d.temperature_max, *t);
      ++d.temperature_count;
    }
    if (auto c = row.get(Metric::SmClockMhz)) {
      d.clock_sum += *c;
      ++d.clock_count;
    }
    if (auto p = row.get(Metric::PowerW)) {
      if (d.last_power_mono != 0) {
        d.power_integral_j +=
            (*p + d.last_power_w) / 2 * static_cast<double>(row.mono_ns - d.last_power_mono) / 1e9;
      }
      d.last_power_w = *p;
      d.last_power_mono = row.mono_ns;
    }
  }
  void on_power(const PowerRow& row) override { inner_.on_power(row); }
  void on_event(const Event& event) override { inner_.on_event(event); }

  void set_indices(std::vector<unsigned> indices) { indices_ = std::move(indices); }

  struct Totals {
    std::optional<double> temperature_mean_c, temperature_max_c, sm_clock_mean_mhz;
    double power_integral_j = 0;
    bool power_everywhere = true;
  };
  Totals totals() const {
    std::lock_guard lock(mutex_);
    Totals t;
    double temperature = 0, clock = 0, max_t = 0;
    int temperatures = 0, clocks = 0;
    for (const auto& d : per_device_) {
      temperature += d.temperature_sum;
      temperatures += d.temperature_count;
      clock += d.clock_sum;
      clocks += d.clock_count;
      if (d.temperature_count > 0) max_t = std::max(max_t, d.temperature_max);
      t.power_integral_j += d.power_integral_j;
      t.power_everywhere &= d.last_power_mono != 0;
    }
    if (temperatures > 0) {
      t.temperature_mean_c = temperature / temperatures;
      t.temperature_max_c = max_t;
    }
    if (clocks > 0) t.sm_clock_mean_mhz = clock / clocks;
    return t;
  }

 private:
  struct PerDevice {
    double temperature_sum = 0, temperature_max = 0, clock_sum = 0;
    int temperature_count = 0, clock_count = 0;
    double power_integral_j = 0, last_power_w = 0;
    std::int64_t last_power_mono = 0;
  };
  PerDevice& slot(unsigned device_index) {
    for (std::size_t i = 0; i < indices_.size(); ++i) {
      if (indices_[i] == device_index) return per_device_[i];
    }
    return per_device_.front();
  }

  RunSink& inner_;
  std::atomic<std::int64_t> window_start_{0};
  mutable std::mutex mutex_;
  std::vector<unsigned> indices_;
  std::vector<PerDevice> per_device_;
};

// Sum of the energy counters of the GPUs (mJ), or nullopt when one cannot be read.
std::optional<double> energy_counters_mj(const TrialSetup& setup) {
  double total = 0;
  for (unsigned index : setup.indices) {
    auto device = setup.session->try_device(index);
    if (!device) return std::nullopt;
    auto mj = device->total_energy_mj();
    if (!mj) return std::nullopt;
    total += static_cast<double>(*mj);
  }
  return total;
}

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

  std::vector<std::string> notes;
  std::vector<collect::DeviceReader> readers;
  for (unsigned index : setup.indices) readers.emplace_back(setup.session->device(index), notes);

  auto writer = store::RunWriter::create(db, true, info, setup.devices);
  RunSink run_sink(*writer, setup.devices.size(), false, info.start_mono_ns);
  TrialSink sink(run_sink, setup.devices.size());
  sink.set_indices(setup.indices);
  collect::SamplerOptions sampler_options{
      duration_cast<nanoseconds>(std::chrono::duration<double, std::milli>(o.sampling_ms)),
      nanoseconds(0)};
  collect::Sampler sampler(std::move(readers), sampler_options, sink);
  sampler.start();

  launch::LaunchOptions launch_options;
  launch_options.argv = o.command;
  launch_options.capture_output = true;
  // The job gets no terminal of its own: Ctrl-C reaches gpuscope, which passes it on and ends
  // the sweep, whatever the job does with it.
  launch_options.job_control = false;

  const std::int64_t warmup_ns = static_cast<std::int64_t>(o.warmup_s * 1e9);
  std::int64_t window_mono = 0;
  std::optional<double> energy_start_mj;
  double units = 0;
  bool any_units = false;
  std::optional<int> interrupt;
  std::int64_t job_start_mono = 0;

  const auto open_window = [&](std::int64_t now) {
    energy_start_mj = energy_counters_mj(setup);
    window_mono = now;
    sink.start_window(now);
  };

  launch::JobCallbacks callbacks;
  callbacks.on_output = [&](const OutputLine& line) {
    writer->push(line);
    if (setup.work_regex && window_mono != 0 && line.mono_ns >= window_mono) {
      if (auto amount = analyze::work_in_line(*setup.work_regex, line.text)) {
        units += *amount;
        any_units = true;
      }
    }
  };
  callbacks.on_event = [&](const Event& event) {
    sink.on_event(event);
    if (event.kind == "signal" && !interrupt) interrupt = signal_from_detail(event.detail);
  };
  callbacks.on_tick = [&] {
    if (window_mono == 0 && job_start_mono != 0 && mono_now_ns() >= job_start_mono + warmup_ns) {
      open_window(mono_now_ns());
    }
  };
  callbacks.tick_interval = milliseconds(warmup_ns > 0 ? 20 : 1000);

  launch::JobResult result;
  if (warmup_ns == 0) open_window(mono_now_ns());
  if (auto job = launch::Job::start(launch_options)) {
    job_start_mono = job->start_mono_ns();
    if (warmup_ns == 0) window_mono = job_start_mono;
    result = job->wait(callbacks);
  } else {
    result = launch::not_started(job.error());
  }
  const std::optional<double> energy_end_mj = energy_counters_mj(setup);
  const std::int64_t end_mono = result.end_mono_ns != 0 ? result.end_mono_ns : mono_now_ns();
  sampler.stop();
  RunEnd end = run_end(result, sampler.stats());
  const auto storage_problems = writer->finish(end);
  for (const auto& p : storage_problems) fmt::print(stderr, "gpuscope: {}\n", p);

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

  if (interrupt) {
    trial.status = "interrupted";
  } else if (result.status != RunStatus::Finished || result.exit_code != 0) {
    trial.status = "failed";
  } else if (window_mono == 0) {
    trial.status = "failed";
    out.description = fmt::format("ended before the {:g} s warmup was over", o.warmup_s);
  } else {
    trial.status = "ok";
  }
  if (window_mono == 0) return out;

  trial.time_s = static_cast<double>(end_mono - window_mono) / 1e9;
  const auto totals = sink.totals();
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

}  // namespace gpuscope::cli
