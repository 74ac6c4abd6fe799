// What phases cost:
//   BM_SendMark        one mark from inside the job (the C++ sender; the Python snippet does the
//                      same system call), received by a running MarkReceiver
//   BM_MarkCommand     one `gpuscope mark begin NAME` from a shell: a process started per mark
//   BM_AnalyzePhases   analyze/phases over N GPUs with 1 h of 100 ms samples each and 1 M phase
//                      instances (10 000 steps, each with 99 nested ranges): measure + sum
//   BM_AnalyzeBinary   `gpuscope analyze --json` of a run database holding 1 M phases (wall time;
//                      peak RSS printed as a counter)
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "analyze/analyzer.hpp"
#include "analyze/phases.hpp"
#include "core/clock.hpp"
#include "phases/mark_socket.hpp"
#include "store/phase_tables.hpp"
#include "store/run_reader.hpp"

extern char** environ;

namespace {

using namespace gpuscope;

std::filesystem::path temp_root() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

void BM_SendMark(benchmark::State& state) {
  std::atomic<std::int64_t> received{0};
  phases::MarkReceiver receiver(temp_root(),
                                [&](const phases::Mark&, std::int64_t) { ++received; });
  receiver.start();
  phases::Mark mark;
  mark.pid = getpid();
  mark.name = "forward";
  std::int64_t busy = 0;
  for (auto _ : state) {
    mark.kind =
        mark.kind == phases::MarkKind::Begin ? phases::MarkKind::End : phases::MarkKind::Begin;
    mark.mono_ns = mono_now_ns();
    busy += phases::send_mark(receiver.address(), mark).result == phases::SendResult::Busy ? 1 : 0;
  }
  receiver.stop();
  state.counters["busy"] = static_cast<double>(busy);
  state.counters["received"] = static_cast<double>(received.load());
}
BENCHMARK(BM_SendMark)->Unit(benchmark::kMicrosecond);

// Runs argv with its output to /dev/null, waits, returns its rusage.
rusage run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  return usage;
}

void BM_MarkCommand(benchmark::State& state) {
  std::atomic<std::int64_t> received{0};
  phases::MarkReceiver receiver(temp_root(),
                                [&](const phases::Mark&, std::int64_t) { ++received; });
  receiver.start();
  setenv("GPUSCOPE_MARK_SOCKET", receiver.address().c_str(), 1);
  for (auto _ : state) run({GPUSCOPE_BENCH_GPUSCOPE, "mark", "point", "step"});
  receiver.stop();
  unsetenv("GPUSCOPE_MARK_SOCKET");
  state.counters["received"] = static_cast<double>(received.load());
}
BENCHMARK(BM_MarkCommand)->Unit(benchmark::kMillisecond);

// 10 000 steps of 0.36 s, each holding 99 ranges of 3 ms: 1 M phase instances over 1 h.
std::vector<analyze::PhaseSpan> million_spans() {
  std::vector<analyze::PhaseSpan> spans;
  spans.reserve(1'000'000);
  for (int step = 0; step < 10'000; ++step) {
    analyze::PhaseSpan s;
    s.name = 0;
    s.instance = std::to_string(step);
    s.source = PhaseSource::Nvtx;
    s.start_s = step * 0.36;
    s.end_s = s.start_s + 0.35;
    spans.push_back(s);
    for (int k = 0; k < 99; ++k) {
      analyze::PhaseSpan inner;
      inner.name = 1 + static_cast<std::uint32_t>(k % 3);
      inner.source = PhaseSource::Nvtx;
      inner.start_s = s.start_s + k * 0.0035;
      inner.end_s = inner.start_s + 0.003;
      spans.push_back(inner);
    }
  }
  return spans;
}

analyze::DeviceSeries hour_of_samples() {
  analyze::DeviceSeries d;
  d.sampling_interval_s = 0.1;
  for (int i = 0; i < 36'000; ++i) {
    d.t_s.push_back(i * 0.1);
    d.values[static_cast<std::size_t>(Metric::EnergyMj)].push_back(i * 50'000.0);
    d.values[static_cast<std::size_t>(Metric::SmActivePct)].push_back(i % 100);
    d.values[static_cast<std::size_t>(Metric::TensorActivePct)].push_back(i % 50);
    d.values[static_cast<std::size_t>(Metric::DramActivePct)].push_back(i % 30);
  }
  return d;
}

void BM_AnalyzePhases(benchmark::State& state) {
  const auto gpus = static_cast<unsigned>(state.range(0));
  const auto spans = million_spans();
  const auto series = hour_of_samples();
  for (auto _ : state) {
    analyze::PhaseAnalysis phases({"step", "forward", "backward", "optimizer"}, spans);
    for (unsigned g = 0; g < gpus; ++g) {
      analyze::PhaseGpuPart part = phases.measure(series, 0, g);
      part.gpu = g;
      phases.add(part);
    }
    benchmark::DoNotOptimize(phases.finish(1e6, std::nullopt, gpus, 10'000));
  }
  state.counters["phases"] = static_cast<double>(spans.size());
}
BENCHMARK(BM_AnalyzePhases)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_AnalyzeBinary(benchmark::State& state) {
  const auto dir = temp_root() / ("gpuscope-bench-phases-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "run.db").string();
  setenv("GPUSCOPE_SIM_STATE", (dir / "state.json").c_str(), 1);
  run({GPUSCOPE_BENCH_GPUSCOPE, "profile", "--simulate", GPUSCOPE_BENCH_SCENARIO, "-q", "-o", db,
       "--", "sleep", "2"});
  // 1 M phases spread over the run's 2 s (the analysis does not care how long they are).
  std::vector<Phase> phases;
  phases.reserve(1'000'000);
  const std::int64_t start = store::RunReader::open(db).runs().at(0).info.start_mono_ns;
  for (std::int64_t i = 0; i < 1'000'000; ++i) {
    Phase p;
    p.source = PhaseSource::Nvtx;
    p.name = i % 100 == 0 ? "step" : (i % 3 == 0 ? "forward" : "backward");
    p.pid = 1;
    p.tid = 1;
    p.start_mono_ns = start + i * 2000;
    p.end_mono_ns = p.start_mono_ns + (i % 100 == 0 ? 190'000 : 1500);
    phases.push_back(std::move(p));
  }
  store::append_phases(db, 1, phases);
  rusage usage{};
  for (auto _ : state) usage = run({GPUSCOPE_BENCH_GPUSCOPE, "analyze", db, "--json"});
  state.counters["peak_rss_mb"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_AnalyzeBinary)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
