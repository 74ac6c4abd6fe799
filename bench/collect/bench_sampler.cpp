// The sampling loop's own cost against the raw cost of the NVML calls it makes, and the CPU a
// sustained 10 ms power cadence takes on an 8-GPU node. Simulated driver by default; set
// GPUSCOPE_NVML_LIBRARY to a real libnvidia-ml.so.1 to measure a real one.
//
//   BM_RawNvmlCalls      the calls DeviceReader::read makes, issued directly (one device-sample)
//   BM_DeviceReaderRead  DeviceReader::read itself: the calls plus gpuscope's bookkeeping
//   BM_PowerCadence8Gpus a Sampler at 100 ms + 10 ms power on 8 GPUs for 5 s: CPU % of one core
//   BM_HealthEventPoll   one poll of the fault events (timeout 0), 8 GPUs registered
//   BM_HealthRead        one read of every health counter of one GPU
//   BM_SamplerHealth8Gpus/H  a Sampler at 100 ms on 8 GPUs for 5 s, health every H s (0: none)
//   BM_SamplerMig8x7/M   a Sampler at 100 ms on 8 GPUs in MIG mode with 7 instances each, for 5 s:
//                        M = 0 the GPUs alone, M = 1 the GPUs and their 56 MIG devices
//   BM_RawAmdCalls, BM_AmdReaderRead: the same for an AMD GPU (bench_amd.cpp)
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <thread>

#include "collect/describe.hpp"
#include "collect/gpu_selection.hpp"
#include "collect/sampler.hpp"
#include "collect/saturation.hpp"
#include "core/clock.hpp"
#include "nvml/session.hpp"

namespace {

using namespace gpuscope;

struct Driver {
  std::shared_ptr<const nvml::Library> library;
  std::unique_ptr<nvml::Session> session;

  explicit Driver(const char* scenario) {
    const char* real = std::getenv("GPUSCOPE_NVML_LIBRARY");
    if (real == nullptr) {
      const std::string path = std::string(GPUSCOPE_BENCH_SCENARIO_DIR) + "/" + scenario + ".json";
      setenv("GPUSCOPE_SIM_SCENARIO", path.c_str(), 1);
    }
    library =
        nvml::Library::open({real != nullptr ? real : GPUSCOPE_BENCH_SIM_LIBRARY, real == nullptr});
    session = std::make_unique<nvml::Session>(library);
  }
};

class NullSink : public collect::SampleSink {
 public:
  void on_sample(const SampleRow&) override { samples.fetch_add(1, std::memory_order_relaxed); }
  void on_power(const PowerRow&) override { power.fetch_add(1, std::memory_order_relaxed); }
  void on_event(const Event&) override {}
  std::atomic<std::int64_t> samples{0}, power{0};
};

// The same NVML calls as DeviceReader::read on a GPU that supports everything.
void raw_sample(const nvml::Device& d, std::span<nvmlFieldValue_t> fields, nvml::GpmSample& a,
                nvml::GpmSample& b, nvml::GpmQuery& query, std::span<std::optional<double>> out,
                std::int64_t& last_gpm_ns) {
  benchmark::DoNotOptimize(d.power_usage_mw());
  benchmark::DoNotOptimize(d.total_energy_mj());
  benchmark::DoNotOptimize(d.enforced_power_limit_mw());
  benchmark::DoNotOptimize(d.utilization());
  benchmark::DoNotOptimize(d.clock_mhz(nvml::ClockType::Sm));
  benchmark::DoNotOptimize(d.clock_mhz(nvml::ClockType::Memory));
  benchmark::DoNotOptimize(d.clock_mhz(nvml::ClockType::Graphics));
  benchmark::DoNotOptimize(d.temperature_c());
  benchmark::DoNotOptimize(d.memory());
  benchmark::DoNotOptimize(d.clock_event_reasons());
  benchmark::DoNotOptimize(d.field_values(fields));
  const std::int64_t now = mono_now_ns();
  if (now - last_gpm_ns >= 100'000'000) {  // GPM at most every 100 ms, as the reader does
    benchmark::DoNotOptimize(b.take(d));
    benchmark::DoNotOptimize(query.compute(a, b, out));
    std::swap(a, b);
    last_gpm_ns = now;
  }
}

void BM_RawNvmlCalls(benchmark::State& state) {
  Driver driver("h100");
  const nvml::Device device = driver.session->device(0);
  nvmlFieldValue_t fields[6]{};
  const unsigned ids[][2] = {{186, 0}, {185, 0}, {82, 0}, {197, 0}, {198, 0}, {186, 1}};
  for (int k = 0; k < 5; ++k) {  // module power (k = 5) is unsupported on H100: the reader skips it
    fields[k].fieldId = ids[k][0];
    fields[k].scopeId = ids[k][1];
  }
  auto a = nvml::GpmSample::allocate(driver.library);
  auto b = nvml::GpmSample::allocate(driver.library);
  const unsigned gpm_ids[] = {1, 2, 3, 5, 6, 7, 9, 10, 11, 12, 13, 4, 20, 21, 61, 60};
  nvml::GpmQuery query(driver.library, gpm_ids);
  std::optional<double> out[std::size(gpm_ids)];
  (void)a->take(device);
  std::int64_t last_gpm = mono_now_ns();
  for (auto _ : state) raw_sample(device, {fields, 5}, *a, *b, query, out, last_gpm);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RawNvmlCalls)->MinTime(2.0);

void BM_DeviceReaderRead(benchmark::State& state) {
  Driver driver("h100");
  std::vector<std::string> notes;
  collect::DeviceReader reader(driver.session->device(0), notes);
  for (auto _ : state) {
    SampleRow row;
    benchmark::DoNotOptimize(reader.read(row, mono_now_ns(), true));
    benchmark::DoNotOptimize(row);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DeviceReaderRead)->MinTime(2.0);

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// A Sampler with `options` on the 8 GPUs of an idle-start node for 5 s, per iteration: the CPU it
// took (% of one core) and what it produced, as the benchmark's counters.
void run_sampler_8gpus(benchmark::State& state, const collect::SamplerOptions& options) {
  Driver driver("h100x8-idle-start");
  NullSink sink;
  double cpu = 0;
  double wall = 0;
  for (auto _ : state) {
    std::vector<std::string> notes;
    collect::GpuReaders readers;
    for (unsigned i = 0; i < driver.session->device_count(); ++i) {
      readers.push_back(std::make_unique<collect::DeviceReader>(driver.session->device(i), notes));
    }
    collect::Sampler sampler(std::move(readers), options, sink);
    const double cpu0 = cpu_seconds();
    const std::int64_t wall0 = mono_now_ns();
    sampler.start();
    std::this_thread::sleep_for(std::chrono::seconds(5));
    sampler.stop();
    cpu += cpu_seconds() - cpu0;
    wall += seconds(mono_now_ns() - wall0);
    state.counters["missed_deadlines"] = static_cast<double>(sampler.stats().deadlines_missed);
    state.counters["health_rows"] = static_cast<double>(sampler.stats().health_rows);
  }
  state.counters["cpu_percent"] = 100.0 * cpu / wall;
  state.counters["power_rows_per_s"] = static_cast<double>(sink.power.load()) / wall;
  state.counters["sample_rows_per_s"] = static_cast<double>(sink.samples.load()) / wall;
}

void BM_PowerCadence8Gpus(benchmark::State& state) {
  run_sampler_8gpus(state, {std::chrono::milliseconds(100), std::chrono::milliseconds(10)});
}
BENCHMARK(BM_PowerCadence8Gpus)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

collect::HealthWatch health_watch(Driver& driver, unsigned gpus) {
  std::vector<collect::HealthReader> readers;
  for (unsigned i = 0; i < gpus; ++i) readers.emplace_back(driver.session->device(i));
  std::vector<std::string> notes;
  return collect::HealthWatch(std::move(readers), notes);
}

void BM_HealthEventPoll(benchmark::State& state) {
  Driver driver("h100x8-idle-start");
  collect::HealthWatch watch = health_watch(driver, driver.session->device_count());
  for (auto _ : state) benchmark::DoNotOptimize(watch.poll_events());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HealthEventPoll)->MinTime(1.0);

void BM_HealthRead(benchmark::State& state) {
  Driver driver("h100");
  collect::HealthWatch watch = health_watch(driver, 1);
  std::vector<HealthRow> rows;
  std::vector<Event> events;
  for (auto _ : state) {
    rows.clear();
    events.clear();
    watch.read(rows, events);
    benchmark::DoNotOptimize(rows);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HealthRead)->MinTime(1.0);

void BM_SamplerHealth8Gpus(benchmark::State& state) {
  run_sampler_8gpus(state,
                    {std::chrono::milliseconds(100), {}, std::chrono::seconds(state.range(0))});
}
BENCHMARK(BM_SamplerHealth8Gpus)
    ->Arg(0)
    ->Arg(1)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

// The largest MIG node: 8 H100s, seven 1g instances each, sampled at 100 ms as profile does (the
// GPUs, then their MIG devices when `state.range(0)` is 1). CPU % of one core, rows per second
// and the CPU time per device-sample.
void BM_SamplerMig8x7(benchmark::State& state) {
  Driver driver("h100x8-mig7");
  NullSink sink;
  const SystemDescription system = collect::describe_system(*driver.session);
  const collect::GpuSelection selection = collect::select_gpus("all", system.devices, {});
  std::vector<unsigned> rows = state.range(0) == 1 ? selection.rows() : selection.indices;
  double cpu = 0, wall = 0;
  for (auto _ : state) {
    std::vector<DeviceDescription> devices;
    for (unsigned index : rows) devices.push_back(collect::device_at(system.devices, index));
    collect::OpenedReaders opened =
        collect::open_readers(*driver.session, rows, devices, {}, std::chrono::milliseconds(100));
    collect::Sampler sampler(std::move(opened.readers), {std::chrono::milliseconds(100)}, sink);
    const double cpu0 = cpu_seconds();
    const std::int64_t wall0 = mono_now_ns();
    sampler.start();
    std::this_thread::sleep_for(std::chrono::seconds(5));
    sampler.stop();
    cpu += cpu_seconds() - cpu0;
    wall += seconds(mono_now_ns() - wall0);
    state.counters["missed_deadlines"] = static_cast<double>(sampler.stats().deadlines_missed);
  }
  const double samples = static_cast<double>(sink.samples.load());
  state.counters["devices"] = static_cast<double>(rows.size());
  state.counters["cpu_percent"] = 100.0 * cpu / wall;
  state.counters["sample_rows_per_s"] = samples / wall;
  state.counters["us_per_device_sample"] = samples > 0 ? 1e6 * cpu / samples : 0;
}
BENCHMARK(BM_SamplerMig8x7)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
