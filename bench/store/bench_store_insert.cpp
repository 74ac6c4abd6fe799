// Device-rows per second through RunWriter end to end: push rows for 8 GPUs with every metric
// present, finish (which commits and checkpoints), and count the rows per wall-clock second.
// The writer thread does the work, so the figure is real time, not the pushing thread's CPU.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <filesystem>
#include <string>

#include "store/run_writer.hpp"

namespace {

using namespace gpuscope;

constexpr unsigned kGpus = 8;

// CPU seconds of the whole process (both threads): steadier than wall time on a shared machine.
double process_cpu_s() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::filesystem::path bench_path() {
  return std::filesystem::temp_directory_path() / "gpuscope-bench-store-insert.db";
}

RunInfo bench_run() {
  RunInfo run;
  run.command = {"bench"};
  run.host = "bench";
  run.sampling_interval_ns = 100'000'000;
  return run;
}

std::vector<DeviceDescription> bench_devices() {
  std::vector<DeviceDescription> out(kGpus);
  for (unsigned i = 0; i < kGpus; ++i) out[i].index = i;
  return out;
}

SampleRow bench_row(unsigned device, std::int64_t tick) {
  SampleRow row;
  row.device_index = device;
  row.wall_ns = 1'700'000'000'000'000'000 + tick * 100'000'000;
  row.mono_ns = tick * 100'000'000;
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    row.set(static_cast<Metric>(i), 100.0 + static_cast<double>(i) + static_cast<double>(tick));
  }
  return row;
}

// Ticks of 8 GPUs per iteration; the writer flushes every interval as in production.
void BM_InsertEndToEnd(benchmark::State& state) {
  const auto ticks = state.range(0);
  std::vector<SampleRow> rows;
  for (std::int64_t tick = 0; tick < ticks; ++tick) {
    for (unsigned d = 0; d < kGpus; ++d) rows.push_back(bench_row(d, tick));
  }
  const double cpu_start = process_cpu_s();
  for (auto _ : state) {
    auto writer = store::RunWriter::create(bench_path(), true, bench_run(), bench_devices());
    for (const auto& row : rows) writer->push(row);
    const auto problems = writer->finish(RunEnd{});
    if (!problems.empty()) state.SkipWithError(problems.front().c_str());
  }
  const auto total_rows =
      static_cast<double>(state.iterations()) * static_cast<double>(rows.size());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(rows.size()));
  state.counters["device_rows"] = static_cast<double>(rows.size());
  // Rows per CPU-second of the process: what an idle machine would reach, roughly.
  state.counters["rows_per_cpu_s"] = total_rows / (process_cpu_s() - cpu_start);
  std::filesystem::remove(bench_path());
}
BENCHMARK(BM_InsertEndToEnd)
    ->Arg(1 << 12)
    ->Arg(1 << 15)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// What the sampler pays per row: push() with the writer thread running beside it.
void BM_Push(benchmark::State& state) {
  auto writer = store::RunWriter::create(bench_path(), true, bench_run(), bench_devices());
  const SampleRow row = bench_row(0, 1);
  for (auto _ : state) writer->push(row);
  state.SetItemsProcessed(state.iterations());
  writer->finish(RunEnd{});
  std::filesystem::remove(bench_path());
}
BENCHMARK(BM_Push);

}  // namespace

BENCHMARK_MAIN();
