// What knowing which processes use the GPUs costs (collect/process_watch.hpp): one look a
// second by default, so a look's cost is the overhead per second. Simulated driver with processes
// named in GPUSCOPE_SIM_PROCESSES_FILE (real pids of this machine, so /proc is really read); set
// GPUSCOPE_NVML_LIBRARY to a real libnvidia-ml.so.1 to measure a real one.
//
//   BM_ResolveProcess       resolving one pid through /proc (comm, cmdline, status, stat, cgroup,
//                           environ), as done once per new process
//   BM_LookKnownProcesses   one look at 8 GPUs with 4 known processes each: the steady state
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "collect/nvidia_gpus.hpp"
#include "collect/process_watch.hpp"
#include "nvml/library.hpp"
#include "nvml/session.hpp"
#include "processes/process_identity.hpp"

namespace {

using namespace gpuscope;

void BM_ResolveProcess(benchmark::State& state) {
  const auto pid = static_cast<unsigned>(::getpid());
  for (auto _ : state) benchmark::DoNotOptimize(processes::resolve_process(pid));
}
BENCHMARK(BM_ResolveProcess)->Unit(benchmark::kMicrosecond);

void BM_LookKnownProcesses(benchmark::State& state) {
  const char* real = std::getenv("GPUSCOPE_NVML_LIBRARY");
  if (real == nullptr) {
    setenv("GPUSCOPE_SIM_SCENARIO", GPUSCOPE_BENCH_SCENARIO, 1);
    const std::string list = "/tmp/gpuscope-bench-processes.txt";
    std::ofstream file(list);
    // Real pids, so every resolve reads real /proc entries: this process and its parent.
    for (unsigned gpu = 0; gpu < 8; ++gpu) {
      file << gpu << ' ' << ::getpid() << " 1024\n" << gpu << ' ' << ::getppid() << " 512\n";
      file << gpu << ' ' << 1 << " 256\n" << gpu << ' ' << 4194000 << " 128\n";
    }
    setenv("GPUSCOPE_SIM_PROCESSES_FILE", list.c_str(), 1);
  }
  auto library =
      nvml::Library::open({real != nullptr ? real : GPUSCOPE_BENCH_SIM_LIBRARY, real == nullptr});
  nvml::Session session(library);
  std::vector<collect::WatchedDevice> devices;
  for (unsigned i = 0; i < session.device_count(); ++i) {
    devices.push_back({i, collect::nvidia_process_lister(session.device(i))});
  }
  collect::ProcessWatch watch(devices, {});
  watch.set_job({::getpid(), std::nullopt, std::nullopt});
  watch.look();  // resolves them once
  for (auto _ : state) watch.look();
  state.counters["gpus"] = static_cast<double>(devices.size());
  state.counters["processes"] = static_cast<double>(watch.latest().size());
}
BENCHMARK(BM_LookKnownProcesses)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
