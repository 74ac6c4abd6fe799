// tsdb client benchmark:
//   1. raw() of 64 GPUs × 10 metrics × 1 h at 15 s (640 series, 240 samples each, 153,600
//      samples) from a real VictoriaMetrics on loopback (/api/v1/export, streamed), REPEAT times;
//   2. the parse of a large /api/v1/query_range answer (SERIES series × POINTS points) by
//      tsdb/answer, REPEAT times.
// Usage: bench_tsdb [REPEAT=5] [SERIES=640] [POINTS=2400]. Prints the median of the repeats.
// Figures go to docs/performance.md with the machine they came from.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "real_servers.hpp"
#include "tsdb/answer.hpp"
#include "tsdb/client.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace gpuscope::tsdb;

constexpr std::int64_t kT0 = 1'704'067'200'000;
constexpr int kGpus = 64;
constexpr int kMetrics = 10;
constexpr int kSamples = 240;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string job_samples() {
  std::string out;
  out.reserve(std::size_t{kGpus} * kMetrics * kSamples * 64);
  for (int metric = 0; metric < kMetrics; ++metric) {
    for (int gpu = 0; gpu < kGpus; ++gpu) {
      const std::string series =
          fmt::format("bench_metric_{}{{gpu=\"{}\",host=\"node{}\"}}", metric, gpu % 8, gpu / 8);
      for (int i = 0; i < kSamples; ++i) {
        fmt::format_to(std::back_inserter(out), "{} {} {}\n", series,
                       (i * 31 + gpu * 7 + metric) % 1000 * 0.125, kT0 + i * 15'000);
      }
    }
  }
  return out;
}

void bench_raw(int repeat) {
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("gpuscope-bench-tsdb-{}", ::getpid());
  std::filesystem::create_directories(dir);
  {
    auto vm = testing::start_victoria_metrics(dir.string());
    if (!vm) {
      fmt::print("raw: skipped (victoria-metrics is not installed)\n");
      return;
    }
    testing::import_into_victoria_metrics(vm->port(), job_samples());
    ClientOptions options;
    options.url = vm->url();
    Client client(options);
    const Window window{kT0, kT0 + 3600'000};
    const std::string selector = R"({__name__=~"bench_metric_.*"})";
    testing::eventually([&] {
      std::size_t n = 0;
      for (const auto& s : client.raw(selector, window, 1'000'000)) n += s.points.size();
      return n == std::size_t{kGpus} * kMetrics * kSamples;
    });
    std::vector<double> seconds;
    std::size_t points = 0;
    std::size_t series = 0;
    for (int r = 0; r < repeat; ++r) {
      const auto start = Clock::now();
      const auto got = client.raw(selector, window, 1'000'000);
      seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      series = got.size();
      points = 0;
      for (const auto& s : got) points += s.points.size();
    }
    const double m = median(seconds);
    fmt::print(
        "raw (VictoriaMetrics export): {} series, {} samples in {:.1f} ms (median of {}); "
        "{:.2f} M samples/s\n",
        series, points, m * 1e3, repeat, static_cast<double>(points) / m / 1e6);
  }
  std::filesystem::remove_all(dir);
}

void bench_parse(int repeat, int series_count, int points) {
  std::string body = R"({"status":"success","data":{"resultType":"matrix","result":[)";
  for (int s = 0; s < series_count; ++s) {
    body += fmt::format(R"({}{{"metric":{{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"{}",)"
                        R"("Hostname":"node{}","UUID":"GPU-{:08x}"}},"values":[)",
                        s == 0 ? "" : ",", s % 8, s / 8, s);
    for (int i = 0; i < points; ++i) {
      fmt::format_to(std::back_inserter(body), R"({}[{}.{:03d},"{}"])", i == 0 ? "" : ",",
                     kT0 / 1000 + i * 15, i % 1000, (i * 37 + s) % 1000 * 0.25);
    }
    body += "]}";
  }
  body += "]}}";
  std::vector<double> seconds;
  std::size_t parsed = 0;
  for (int r = 0; r < repeat; ++r) {
    const auto start = Clock::now();
    const auto answer = query_answer(answer_document(body));
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    parsed = 0;
    for (const auto& s : answer.series) parsed += s.points.size();
  }
  const double m = median(seconds);
  fmt::print(
      "parse (query_range answer): {:.1f} MB, {} samples in {:.1f} ms (median of {}); "
      "{:.0f} MB/s, {:.2f} M samples/s\n",
      static_cast<double>(body.size()) / 1e6, parsed, m * 1e3, repeat,
      static_cast<double>(body.size()) / m / 1e6, static_cast<double>(parsed) / m / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeat = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const int series = argc > 2 ? std::max(1, std::atoi(argv[2])) : 640;
  const int points = argc > 3 ? std::max(1, std::atoi(argv[3])) : 2400;
  bench_raw(repeat);
  bench_parse(repeat, series, points);
  return 0;
}
