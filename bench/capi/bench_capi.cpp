// The C library's costs through gpuscope.h alone, on the 8 simulated H100s of h100x8-idle-start
// (GPUSCOPE_NVML_LIBRARY set beforehand measures a real driver's GPUs instead):
//
//   BM_WindowBeginEnd        gpuscope_window_begin + gpuscope_window_end with every GPU's
//                            figures: the median is Google Benchmark's time per iteration over
//                            repetitions (--benchmark_repetitions), p50/p99 from a histogram
//   BM_WindowBeginEndThreads the same from 4 threads at once (the lock they share)
//   BM_MonitorSampling       a monitor sampling every 100 ms for 5 s with no window: CPU, % of
//                            one core (the whole process), and with what the simulated driver
//                            charged when a cost table is set (GPUSCOPE_SIM_DRIVER_COSTS=h200)
#include <benchmark/benchmark.h>
#include <gpuscope.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "sim_charged.hpp"

namespace {

void use_simulator() {
  if (std::getenv("GPUSCOPE_NVML_LIBRARY") == nullptr) {
    setenv("GPUSCOPE_NVML_LIBRARY", GPUSCOPE_BENCH_SIM_LIBRARY, 1);
    setenv("GPUSCOPE_SIM_SCENARIO", GPUSCOPE_BENCH_SCENARIO, 1);
  }
}

gpuscope_monitor* shared = nullptr;

// The window benchmarks' monitor, opened once; closed before the sampling benchmark, whose CPU
// figure must be its own monitor's alone.
gpuscope_monitor* shared_monitor() {
  if (shared == nullptr) {
    use_simulator();
    if (gpuscope_monitor_open(nullptr, &shared) != GPUSCOPE_OK) {
      std::fprintf(stderr, "bench_capi: %s\n", gpuscope_last_error());
      std::exit(1);
    }
  }
  return shared;
}

double percentile(std::vector<double>& v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

void BM_WindowBeginEnd(benchmark::State& state) {
  gpuscope_monitor* monitor = shared_monitor();
  gpuscope_window window;
  gpuscope_window_init(&window);
  std::vector<gpuscope_gpu_window> gpus(8);
  gpuscope_gpu_window_init(gpus.data(), gpus.size());
  std::vector<double> ns;
  ns.reserve(1 << 20);
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t id = 0;
    gpuscope_window_begin(monitor, "step", &id);
    gpuscope_window_end(monitor, id, &window, gpus.data(), gpus.size());
    ns.push_back(static_cast<double>((std::chrono::steady_clock::now() - t0).count()));
  }
  state.counters["gpus"] = window.gpu_count;
  state.counters["p50_us"] = percentile(ns, 0.5) / 1e3;
  state.counters["p99_us"] = percentile(ns, 0.99) / 1e3;
}
BENCHMARK(BM_WindowBeginEnd);
BENCHMARK(BM_WindowBeginEnd)->Threads(4)->Name("BM_WindowBeginEndThreads");

double cpu_s() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double charged_s() {
  return gpuscope::bench::sim_charged_s(GPUSCOPE_BENCH_SIM_LIBRARY);
}

void BM_MonitorSampling(benchmark::State& state) {
  use_simulator();
  if (shared != nullptr) gpuscope_monitor_close(shared);
  shared = nullptr;
  gpuscope_options options;
  gpuscope_options_init(&options);
  options.energy_counter_ms = static_cast<double>(state.range(0));
  double cpu = 0, charged = 0, wall = 0;
  for (auto _ : state) {
    gpuscope_monitor* monitor = nullptr;
    if (gpuscope_monitor_open(&options, &monitor) != GPUSCOPE_OK) {
      state.SkipWithError(gpuscope_last_error());
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // its start
    const double c0 = cpu_s(), d0 = charged_s();
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(5));
    cpu += cpu_s() - c0;
    charged += charged_s() - d0;
    wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gpuscope_monitor_close(monitor);
  }
  state.counters["cpu_percent"] = 100 * cpu / wall;
  state.counters["driver_cpu_percent"] = 100 * (cpu + charged) / wall;
}
BENCHMARK(BM_MonitorSampling)->Arg(0)->Arg(1000)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
