// gpuscope job's reader on hostile sizes, in process, no server:
//   1. ingest::read_job of one GPU whose raw read brings SERIES series (50,000: each with a label
//      of its own, one sample each), through a tsdb::Source given by hand; prints the wall time
//      of the whole read (before the fix, each series was compared with every earlier one of
//      its GPU);
//   2. the peak memory of reading a /api/v1/query_range answer of MB megabytes (40) of samples:
//      tsdb::answer_document + query_answer (streamed, SAX) against nlohmann's JSON document of
//      the same text (what the reader built before the fix), each in a fresh process of its own
//      (this program, run as `--peak sax|dom FILE`), its peak RSS less its RSS with the text read.
// Usage: bench_job_series [SERIES=50000] [MB=40]. Figures go to docs/performance.md.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "fake_source.hpp"
#include "ingest/monitoring/monitoring.hpp"
#include "ingest/run_target.hpp"
#include "tsdb/answer.hpp"

namespace {

using namespace gpuscope;
using Clock = std::chrono::steady_clock;
constexpr std::int64_t kT0 = 1'700'000'000'000;

// One GPU of job 123 found by its label; its raw read answers `count` series of it.
class ManySeries : public ingest::testing::FakeSource {
 public:
  explicit ManySeries(std::size_t count) : count_(count) {}
  std::vector<tsdb::Series> raw(const std::string& sel, const tsdb::Window& w,
                                std::size_t max_points) override {
    auto out = FakeSource::raw(sel, w, max_points);
    if (out.empty()) return out;
    const tsdb::Labels base = out.front().labels;
    for (std::size_t i = 0; i < count_; ++i) {
      tsdb::Labels labels = base;
      labels["shard"] = std::to_string(i);
      out.push_back(tsdb::Series{std::move(labels),
                                 {{kT0 + static_cast<std::int64_t>(i % 10) * 15'000, 250.0}}});
    }
    return out;
  }

 private:
  std::size_t count_;
};

void bench_series(std::size_t count) {
  ManySeries source(count);
  const tsdb::Labels gpu = {{"__name__", "gpuscope_power_watts"},
                            {"gpu", "0"},
                            {"uuid", "GPU-aaa"},
                            {"hostname", "n1"},
                            {"slurm_job_id", "123"}};
  std::vector<tsdb::Point> points;
  for (int i = 0; i < 10; ++i) points.push_back({kT0 + i * 15'000, 250.0});
  source.add(gpu, points);
  ingest::JobWindow job;
  job.kind = "slurm";
  job.id = "123";
  job.window = {kT0, kT0 + 9 * 15'000};
  job.nodes = {"n1"};
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("gpuscope-bench-series-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const auto start = Clock::now();
  {
    ingest::RunTarget target(dir / "job.db", false);
    const auto result = ingest::read_job(source, job, {}, target);
    target.finish();
    fmt::print("read_job, 1 GPU, {} series: {} samples written, ", count + 1, result.samples);
  }
  fmt::print("{:.2f} s\n", std::chrono::duration<double>(Clock::now() - start).count());
  std::filesystem::remove_all(dir);
}

std::string matrix_answer(std::size_t bytes) {
  std::string out = R"({"status":"success","data":{"resultType":"matrix","result":[)";
  for (int s = 0; out.size() < bytes; ++s) {
    out += fmt::format(R"({}{{"metric":{{"__name__":"p","gpu":"{}"}},"values":[)", s ? "," : "", s);
    for (int i = 0; i < 10'000; ++i) {
      out += fmt::format(R"({}[{:.3f},"{}"])", i ? "," : "", 1'704'067'200.0 + i * 15.0,
                         (i * 37 + s) % 700 * 0.5);
    }
    out += "]}";
  }
  return out + "]}}";
}

long status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(field.size()));
  }
  return 0;
}

// The bench itself, run again as `--peak sax|dom FILE`: reads FILE, then parses it, and prints the
// MiB its peak RSS rose above what it had with the text in memory (a fresh process, so no
// heap another measure left behind is reused).
int peak(const std::string& how, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream("/proc/self/clear_refs") << "5";  // the peak RSS starts again from here
  const long before = status_kib("VmRSS:");
  std::size_t held = 0;
  if (how == "sax") {
    held = tsdb::query_answer(tsdb::answer_document(body)).series.size();
  } else {
    held = nlohmann::json::parse(body).size();
  }
  fmt::print("{:.0f}\n", static_cast<double>(status_kib("VmHWM:") - before) / 1024.0);
  return held > 0 ? 0 : 1;
}

std::string run_peak(const char* self, const std::string& how, const std::string& file) {
  const std::string command = fmt::format("'{}' --peak {} '{}'", self, how, file);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "?";
  char line[64] = {};
  const bool got = fgets(line, sizeof(line), pipe) != nullptr;
  pclose(pipe);
  std::string out = got ? line : "?";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void bench_answer(const char* self, std::size_t mb) {
  const std::string body = matrix_answer(mb << 20);
  const auto file =
      std::filesystem::temp_directory_path() / fmt::format("gpuscope-bench-answer-{}", ::getpid());
  std::ofstream(file, std::ios::binary) << body;
  const auto start = Clock::now();
  const std::size_t series = tsdb::query_answer(tsdb::answer_document(body)).series.size();
  fmt::print("a {:.1f} MB matrix answer ({} series of 10,000 samples): parsed in {:.2f} s\n",
             static_cast<double>(body.size()) / 1e6, series,
             std::chrono::duration<double>(Clock::now() - start).count());
  fmt::print(
      "peak memory above the text: streamed (SAX), series included: {} MiB; a JSON document of "
      "it (what was built before, the series then made from it not counted): {} MiB\n",
      run_peak(self, "sax", file.string()), run_peak(self, "dom", file.string()));
  std::filesystem::remove(file);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--peak") return peak(argv[2], argv[3]);
  const std::size_t series = argc > 1 ? std::stoul(argv[1]) : 50'000;
  const std::size_t mb = argc > 2 ? std::stoul(argv[2]) : 40;
  bench_series(series);
  bench_answer(argv[0], mb);
  return 0;
}
