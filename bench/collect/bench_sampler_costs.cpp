// The sampler on 8 GPUs against a driver as slow as a real one (docs/performance.md, "Real driver
// costs"): the simulated driver charges the calls what they cost on an NVIDIA H200 (the "h200"
// table of sim/costs.hpp: the energy counter 3.84 ms, field 185 763 µs, a GPM sample 34 µs...).
//
//   BM_RealCosts8Gpus/P/W/C  a Sampler at 100 ms on the 8 GPUs of h100x8-idle-start for 5 s,
//                            power every P ms (0: no power cadence), the driver's waits W (0:
//                            each GPU's calls take turns, 1: every call of the node takes turns),
//                            the energy counter every C ms (0: at every sample)
//
// Counters, from the rows themselves: missed ticks (a gap between two rows of one GPU longer than
// 1.5 intervals counts the ticks it skipped), the largest gap, how far apart the 8 GPUs' rows of
// one tick were taken (the spread, median and largest), the energy counter readings per GPU and
// second on the power cadence, the integrated power against the counter over the same readings,
// CPU (% of one core, the whole process) and rows per second. The simulated driver sleeps through
// its slow calls where the real one spins (docs/validation.md): `driver_cpu_percent` adds the
// time it charged, the CPU the real driver would have burnt. On a real driver (GPUSCOPE_NVML_
// LIBRARY) cpu_percent already holds it.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "collect/device_reader.hpp"
#include "collect/sampler.hpp"
#include "core/clock.hpp"
#include "nvml/session.hpp"
#include "sim_charged.hpp"

namespace {

using namespace gpuscope;

class TimingSink : public collect::SampleSink {
 public:
  void on_sample(const SampleRow& row) override {
    std::lock_guard lock(mutex_);
    samples[row.device_index].push_back(row.mono_ns);
    if (row.get(Metric::EnergyMj)) ++sample_counter_reads;
  }
  void on_power(const PowerRow& row) override {
    std::lock_guard lock(mutex_);
    power[row.device_index].push_back(row);
  }
  void on_event(const Event&) override {}
  std::mutex mutex_;
  std::map<unsigned, std::vector<std::int64_t>> samples;
  std::map<unsigned, std::vector<PowerRow>> power;
  std::int64_t sample_counter_reads = 0;  // samples that carry the energy counter
};

double cpu_now_s() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

struct Gaps {
  std::int64_t missed = 0;
  double largest_ms = 0;
};

// The ticks skipped between consecutive times of one GPU, and the largest gap.
void add_gaps(const std::vector<std::int64_t>& times, std::int64_t interval_ns, Gaps& gaps) {
  for (std::size_t k = 1; k < times.size(); ++k) {
    const std::int64_t gap = times[k] - times[k - 1];
    gaps.largest_ms = std::max(gaps.largest_ms, static_cast<double>(gap) / 1e6);
    if (gap * 2 > interval_ns * 3) gaps.missed += (gap + interval_ns / 2) / interval_ns - 1;
  }
}

// How far apart the GPUs' k-th rows were taken: the median and the largest, in ms.
std::pair<double, double> tick_spread_ms(
    const std::map<unsigned, std::vector<std::int64_t>>& rows) {
  std::size_t ticks = SIZE_MAX;
  for (const auto& [gpu, times] : rows) ticks = std::min(ticks, times.size());
  if (rows.empty() || ticks == 0) return {0, 0};
  std::vector<double> spreads;
  for (std::size_t k = 0; k < ticks; ++k) {
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& [gpu, times] : rows) {
      lo = std::min(lo, times[k]);
      hi = std::max(hi, times[k]);
    }
    spreads.push_back(static_cast<double>(hi - lo) / 1e6);
  }
  std::sort(spreads.begin(), spreads.end());
  return {spreads[spreads.size() / 2], spreads.back()};
}

// One GPU's power rows: counter readings, and power integrated over the span between the first
// and the last counter reading against the counter's difference there (%).
void energy_check(const std::vector<PowerRow>& rows, std::int64_t& counter_reads,
                  double& worst_pct) {
  std::size_t first = SIZE_MAX, last = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (!rows[k].energy_mj) continue;
    ++counter_reads;
    first = std::min(first, k);
    last = k;
  }
  if (first == SIZE_MAX || last <= first) return;
  double joules = 0;
  for (std::size_t k = first + 1; k <= last; ++k) {
    if (!rows[k].power_w || !rows[k - 1].power_w) continue;
    const double dt = static_cast<double>(rows[k].mono_ns - rows[k - 1].mono_ns) / 1e9;
    joules += 0.5 * (*rows[k].power_w + *rows[k - 1].power_w) * dt;
  }
  const double counter_j = (*rows[last].energy_mj - *rows[first].energy_mj) / 1000.0;
  if (counter_j > 0) {
    const double pct = 100.0 * (joules - counter_j) / counter_j;
    if (std::abs(pct) > std::abs(worst_pct)) worst_pct = pct;
  }
}

double charged_s() {
  return gpuscope::bench::sim_charged_s(GPUSCOPE_BENCH_SIM_LIBRARY);
}

void BM_RealCosts8Gpus(benchmark::State& state) {
  const std::int64_t power_ms = state.range(0);
  const bool node_waits = state.range(1) == 1;
  const std::int64_t counter_ms = state.range(2);
  const char* real = std::getenv("GPUSCOPE_NVML_LIBRARY");
  if (real == nullptr) {
    setenv("GPUSCOPE_SIM_SCENARIO",
           (std::string(GPUSCOPE_BENCH_SCENARIO_DIR) + "/h100x8-idle-start.json").c_str(), 1);
    setenv("GPUSCOPE_SIM_DRIVER_COSTS", node_waits ? "h200:node" : "h200:gpu", 1);
    // Each variant from the scenario's start (its idle first seconds), not where the previous
    // one left the simulated GPUs: the same power to integrate in every variant.
    setenv("GPUSCOPE_SIM_EPOCH_NS", std::to_string(wall_now_ns()).c_str(), 1);
  }
  auto library =
      nvml::Library::open({real != nullptr ? real : GPUSCOPE_BENCH_SIM_LIBRARY, real == nullptr});
  TimingSink sink;
  double cpu = 0, wall = 0, charged = 0;
  {
    nvml::Session session(library);
    for (auto _ : state) {
      std::vector<std::string> notes;
      collect::GpuReaders readers;
      for (unsigned i = 0; i < session.device_count(); ++i) {
        readers.push_back(std::make_unique<collect::DeviceReader>(session.device(i), notes));
      }
      collect::Sampler sampler(std::move(readers),
                               {std::chrono::milliseconds(100), std::chrono::milliseconds(power_ms),
                                std::chrono::nanoseconds(0), std::chrono::milliseconds(counter_ms)},
                               sink);
      const double cpu0 = cpu_now_s();
      const double charged0 = charged_s();
      const std::int64_t wall0 = mono_now_ns();
      sampler.start();
      std::this_thread::sleep_for(std::chrono::seconds(5));
      sampler.stop();
      cpu += cpu_now_s() - cpu0;
      charged += charged_s() - charged0;
      wall += static_cast<double>(mono_now_ns() - wall0) / 1e9;
    }
  }
  unsetenv("GPUSCOPE_SIM_DRIVER_COSTS");
  unsetenv("GPUSCOPE_SIM_EPOCH_NS");
  Gaps main_gaps, power_gaps;
  std::int64_t counter_reads = 0, sample_rows = 0, power_rows = 0;
  double worst_pct = 0;
  for (const auto& [gpu, times] : sink.samples) {
    add_gaps(times, 100'000'000, main_gaps);
    sample_rows += static_cast<std::int64_t>(times.size());
  }
  for (const auto& [gpu, rows] : sink.power) {
    std::vector<std::int64_t> times;
    for (const auto& row : rows) times.push_back(row.mono_ns);
    add_gaps(times, power_ms * 1'000'000, power_gaps);
    energy_check(rows, counter_reads, worst_pct);
    power_rows += static_cast<std::int64_t>(rows.size());
  }
  const auto [spread_p50, spread_max] = tick_spread_ms(sink.samples);
  state.counters["missed"] = static_cast<double>(main_gaps.missed);
  state.counters["largest_gap_ms"] = main_gaps.largest_ms;
  state.counters["spread_p50_ms"] = spread_p50;
  state.counters["spread_max_ms"] = spread_max;
  state.counters["power_missed"] = static_cast<double>(power_gaps.missed);
  state.counters["power_gap_ms"] = power_gaps.largest_ms;
  state.counters["counter_reads_per_gpu_s"] =
      sink.power.empty()
          ? 0
          : static_cast<double>(counter_reads) / static_cast<double>(sink.power.size()) / wall;
  state.counters["sample_counter_reads_per_gpu_s"] =
      sink.samples.empty() ? 0
                           : static_cast<double>(sink.sample_counter_reads) /
                                 static_cast<double>(sink.samples.size()) / wall;
  state.counters["integrated_vs_counter_pct"] = worst_pct;
  state.counters["cpu_percent"] = 100.0 * cpu / wall;
  state.counters["driver_cpu_percent"] = 100.0 * (cpu + charged) / wall;
  state.counters["sample_rows_per_s"] = static_cast<double>(sample_rows) / wall;
  state.counters["power_rows_per_s"] = static_cast<double>(power_rows) / wall;
}
BENCHMARK(BM_RealCosts8Gpus)
    ->Args({10, 0, 0})
    ->Args({10, 1, 0})
    ->Args({0, 0, 0})
    ->Args({0, 1, 0})
    ->Args({10, 0, 1000})
    ->Args({0, 0, 1000})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace
