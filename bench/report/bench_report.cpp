// The HTML report of a large run: 1024 GPUs × 1 h (128 ranks × 8 GPUs; `--preset 10k`: 10,000
// GPUs, 1250 ranks × 8), built by feeding the real Analyzer synthetic series (no database), then
// rendered by html_report() a few times.
// Prints the time to render and the file's size, and writes the HTML so that
// bench/report/open_time.mjs can time opening it in Chromium.
//
// Samples are 1 s apart: the report's size and drawing cost depend on its grids (≤ 2000
// over-space bins, 300 per-GPU bins), not on the sampling rate, and 1 s keeps feeding the
// analyzer short. Every H100 metric but module power is present except on every 64th GPU,
// which has no GPM (its saturation metrics are "not supported"); the first 2 minutes are idle;
// GPUs 7, 300, 1000, 5003 and 9998 (those there are) are stragglers. The series are smooth and
// alike, so they compress far better than real ones: `--noise F` adds to each sample's activity
// a pseudo-random ±F (deterministic), which makes the embedded data about as incompressible as
// measured series are.
//
// Usage: bench_report [--preset 1024|10k] [--gpus N] [--seconds N] [--noise F] [--repeat N]
//                     [--output FILE]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "analyze/analyzer.hpp"
#include "report/html_report.hpp"

namespace {

using namespace gpuscope;
using Clock = std::chrono::steady_clock;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr unsigned kGpusPerRank = 8;
constexpr double kIdleS = 120;

bool straggler(unsigned gpu) {
  return gpu == 7 || gpu == 300 || gpu == 1000 || gpu == 5003 || gpu == 9998;
}

// Uniform in [-1, 1], the same for the same GPU and sample (a splitmix64 hash).
double noise(unsigned gpu, std::size_t i) {
  std::uint64_t z = (std::uint64_t{gpu} << 32U) + i + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
  z ^= z >> 31U;
  return static_cast<double>(z >> 11U) / static_cast<double>(1ULL << 52U) - 1.0;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One GPU's series: activity with a slow wave and per-step jitter; power, clocks and
// temperature follow it.
void fill(analyze::DeviceSeries& d, unsigned gpu, std::size_t seconds, double noise_amplitude) {
  d.clear();
  d.key.run_id = gpu / kGpusPerRank;
  d.key.host = fmt::format("nid{:04}", gpu / kGpusPerRank);
  d.key.rank = static_cast<int>(gpu / kGpusPerRank);
  d.key.device_index = gpu % kGpusPerRank;
  d.key.name = "NVIDIA H100 80GB HBM3";
  d.sampling_interval_s = 1.0;
  const bool gpm = gpu % 64 != 63;
  const double busy = straggler(gpu) ? 0.45 : 0.85;
  double energy_mj = 1e9;
  for (std::size_t i = 0; i < seconds; ++i) {
    const double t = static_cast<double>(i);
    d.t_s.push_back(t);
    for (auto& v : d.values) v.push_back(kNaN);
    auto set = [&](Metric m, double v) { d.values[static_cast<std::size_t>(m)].back() = v; };
    const double jitter = std::sin(t * 1.7 + gpu) * 0.05;
    const double a =
        t < kIdleS
            ? 0.02
            : std::clamp(busy + 0.08 * std::sin(t / 90) + jitter + noise_amplitude * noise(gpu, i),
                         0.0, 1.0);
    const double power = 90 + 560 * a;
    set(Metric::PowerW, power);
    set(Metric::PowerInstantW, power * (1 + jitter));
    set(Metric::PowerAverageW, power);
    set(Metric::EnergyMj, energy_mj);
    set(Metric::PowerLimitW, 700);
    set(Metric::GpuUtilPct, t < kIdleS ? 0 : 100);
    set(Metric::MemUtilPct, 40 * a);
    set(Metric::SmClockMhz, 1980 - 200 * a);
    set(Metric::MemClockMhz, 2619);
    set(Metric::GraphicsClockMhz, 1980 - 200 * a);
    set(Metric::TemperatureC, 35 + 40 * a);
    set(Metric::MemoryTemperatureC, 33 + 35 * a);
    set(Metric::MemoryUsedBytes, (t < kIdleS ? 2e9 : 70e9));
    set(Metric::MemoryFreeBytes, 85.5e9 - (t < kIdleS ? 2e9 : 70e9));
    set(Metric::MemoryReservedBytes, 0.5e9);
    set(Metric::ClockEventReasons, a > 0.9 ? 4 : 0);
    if (gpm) {
      set(Metric::GraphicsActivePct, 100 * a);
      set(Metric::SmActivePct, 100 * a);
      set(Metric::SmOccupancyPct, 45 * a);
      set(Metric::TensorActivePct, 60 * a);
      set(Metric::DramActivePct, 35 * a);
      set(Metric::Fp64ActivePct, 0);
      set(Metric::Fp32ActivePct, 10 * a);
      set(Metric::Fp16ActivePct, 20 * a);
      set(Metric::PcieTxBytesPerS, 2e9 * a);
      set(Metric::PcieRxBytesPerS, 3e9 * a);
      set(Metric::NvlinkTxBytesPerS, 100e9 * a);
      set(Metric::NvlinkRxBytesPerS, 100e9 * a);
    }
    energy_mj += power * 1000;
  }
}

}  // namespace

int main(int argc, char** argv) {
  unsigned gpus = 1024;
  std::size_t seconds = 3600;
  int repeat = 3;
  double noise_amplitude = 0;
  std::string output = "report-bench.html";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--preset") gpus = std::string(argv[i + 1]) == "10k" ? 10000 : 1024;
    if (arg == "--noise") noise_amplitude = std::atof(argv[i + 1]);
    if (arg == "--gpus") gpus = static_cast<unsigned>(std::atoi(argv[i + 1]));
    if (arg == "--seconds") seconds = static_cast<std::size_t>(std::atol(argv[i + 1]));
    if (arg == "--repeat") repeat = std::atoi(argv[i + 1]);
    if (arg == "--output") output = argv[i + 1];
  }

  std::vector<analyze::RunMeta> runs;
  for (unsigned r = 0; r < (gpus + kGpusPerRank - 1) / kGpusPerRank; ++r) {
    analyze::RunMeta run;
    run.run_id = r;
    run.host = fmt::format("nid{:04}", r);
    run.rank = static_cast<int>(r);
    run.start_wall_ns = 1'700'000'000'000'000'000;
    run.end_wall_ns = run.start_wall_ns + static_cast<std::int64_t>(seconds) * 1'000'000'000;
    run.sampling_interval_s = 1.0;
    run.status = "finished";
    run.exit_code = 0;
    run.command_line = "python train.py --config big.yaml";
    runs.push_back(run);
  }
  analyze::AnalysisOptions options;
  options.gpu_grid_metrics = report::html_report_grid_metrics();
  analyze::Analyzer analyzer(options, runs);
  const auto feed_start = Clock::now();
  analyze::DeviceSeries d;
  std::vector<double> activity;
  for (unsigned g = 0; g < gpus; ++g) {
    fill(d, g, seconds, noise_amplitude);
    activity.clear();
    for (std::size_t i = 0; i < d.t_s.size(); ++i) {
      activity.push_back(
          analyze::sample_activity(d.of(Metric::SmActivePct)[i], d.of(Metric::GpuUtilPct)[i]));
    }
    analyzer.add_activity(d.t_s, activity);
  }
  analyzer.finish_activity();
  for (unsigned g = 0; g < gpus; ++g) {
    fill(d, g, seconds, noise_amplitude);
    analyzer.add_device(d);
  }
  analyze::Analysis analysis = analyzer.finish();
  for (int k = 0; k < 200; ++k) {
    analysis.marks.push_back(
        {kIdleS + k * 17.0, "stdout", fmt::format("step {} loss 0.{}", k * 100, 900 - k), ""});
  }
  analysis.marks.push_back({0, "job_start", "python train.py --config big.yaml", ""});
  const double feed_s = seconds_since(feed_start);

  std::string html;
  std::vector<double> times;
  for (int k = 0; k < repeat; ++k) {
    const auto start = Clock::now();
    html = report::html_report(
        analysis, {fmt::format("bench: {} GPUs × {} s", gpus, seconds), "bench_report"});
    times.push_back(seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  std::ofstream(output, std::ios::binary) << html;
  fmt::print(
      "GPUs {} · {} s at 1 Hz · noise ±{} · analysis built in {:.1f} s (not part of the figure)\n",
      gpus, seconds, noise_amplitude, feed_s);
  fmt::print("html_report(): median {:.3f} s, min {:.3f} s over {} runs\n", times[times.size() / 2],
             times.front(), repeat);
  fmt::print("HTML size: {:.2f} MB ({} bytes) → {}\n", static_cast<double>(html.size()) / 1e6,
             html.size(), output);
  return 0;
}
