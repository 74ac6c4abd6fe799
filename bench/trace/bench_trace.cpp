// The kernel trace's costs, on hand-built CUPTI records (no GPU): what the injection library
// spends per record inside the job (processing a CUPTI buffer into sidecar records and appending
// them), and what gpuscope spends after it (importing a million kernels into the run database,
// exporting them with `gpuscope export --perfetto`, summarising them with `gpuscope kernels`).
// Figures in docs/performance.md. Usage: bench_trace [KERNELS] (default 1 000 000)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "store/run_file.hpp"
#include "store/sqlite.hpp"
#include "trace/cupti/activity_records.hpp"
#include "trace/cupti_buffers.hpp"
#include "trace/import.hpp"
#include "trace/sidecar_writer.hpp"

namespace {

using namespace gpuscope;
using namespace gpuscope::trace;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Peak RSS of a command (ru_maxrss of the child), and its wall time.
std::pair<double, double> run_measured(const std::string& command) {
  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "failed: %s\n", command.c_str());
    std::exit(1);
  }
  return {seconds_since(start), static_cast<double>(usage.ru_maxrss) / 1024.0};
}

}  // namespace

int main(int argc, char** argv) {
  const long kernels = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  const fs::path dir =
      fs::temp_directory_path() / ("gpuscope-bench-trace-" + std::to_string(getpid()));
  fs::create_directories(dir / "run.db.trace");
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) {
    names.push_back("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEE" +
                    std::to_string(i) + "EEviT0_T1_");
  }

  // 1. Inside the job: CUPTI buffers of ~19 000 kernel records (4 MiB, the library's size).
  const long per_buffer = static_cast<long>((std::size_t{4} << 20) / sizeof(cupti::KernelActivity));
  SidecarFile file;
  if (!file.open((dir / "run.db.trace").string(), "bench", 1)) return 1;
  SidecarBatch batch;
  ProcessRecord process{};
  process.pid = 1;
  process.timestamp_source = static_cast<std::uint32_t>(TimestampSource::Monotonic);
  batch.add(RecordType::Process, process);
  batch.add(RecordType::Device, [&] {
    DeviceRecord d{};
    d.flags = kDeviceHasUuid;
    return d;
  }());
  file.append(batch);
  cupti::ActivityProcessor processor;
  double process_s = 0;
  double append_s = 0;
  const auto t0 = static_cast<std::uint64_t>(mono_now_ns());
  for (long done = 0; done < kernels; done += per_buffer) {
    testing::CuptiBuffer buffer(static_cast<std::size_t>(per_buffer) *
                                sizeof(cupti::KernelActivity));
    const long n = std::min(per_buffer, kernels - done);
    for (long i = 0; i < n; ++i) {
      const std::uint64_t start = t0 + static_cast<std::uint64_t>(done + i) * 2000;
      testing::add_kernel(buffer, names[static_cast<std::size_t>(done + i) % names.size()].c_str(),
                          start, start + 1500, 0, 7);
    }
    batch.clear();
    auto t = Clock::now();
    processor.process_buffer(buffer.data(), buffer.used(), batch);
    process_s += seconds_since(t);
    t = Clock::now();
    file.append(batch);
    append_s += seconds_since(t);
  }
  batch.clear();
  batch.add(RecordType::End, EndRecord{mono_now_ns()});
  file.append(batch);
  file.close();
  const double sidecar_mb = static_cast<double>(fs::file_size(file.path())) / 1e6;
  std::printf("kernels                    %ld\n", kernels);
  std::printf("library: process records  %.0f ns/kernel (%.2f s)\n",
              process_s / static_cast<double>(kernels) * 1e9, process_s);
  std::printf(
      "library: append to file   %.0f ns/kernel (%.2f s), sidecar %.1f MB (%.0f B/kernel)\n",
      append_s / static_cast<double>(kernels) * 1e9, append_s, sidecar_mb,
      sidecar_mb * 1e6 / static_cast<double>(kernels));

  // 2. After the job: import into a run database with 4 GPUs.
  RunInfo run;
  run.command = {"bench"};
  run.start_wall_ns = wall_now_ns();
  run.start_mono_ns = mono_now_ns();
  std::vector<DeviceDescription> gpus(4);
  for (unsigned i = 0; i < 4; ++i) {
    gpus[i].index = i;
    gpus[i].uuid = i == 0 ? "GPU-00000000-0000-0000-0000-000000000000" : "GPU-1";
  }
  const fs::path db = dir / "run.db";
  {
    auto created = store::create_run_file(db, false, run, gpus);
    store::close_run_file(*created.db, db);
  }
  const double before_mb = static_cast<double>(fs::file_size(db)) / 1e6;
  auto t = Clock::now();
  const ImportSummary imported = import_trace_dir(dir / "run.db.trace", db, 1, gpus);
  const double import_s = seconds_since(t);
  const double db_mb = static_cast<double>(fs::file_size(db)) / 1e6 - before_mb;
  std::printf(
      "import                     %.2f s (%.1f µs/kernel), %lld kernels, +%.1f MB database "
      "(%.0f B/kernel)\n",
      import_s, import_s / static_cast<double>(kernels) * 1e6,
      static_cast<long long>(imported.kernels), db_mb, db_mb * 1e6 / static_cast<double>(kernels));

  // 3. The real binary on it.
  const std::string gpuscope = GPUSCOPE_BENCH_GPUSCOPE;
  auto [kernels_s, kernels_rss] =
      run_measured(gpuscope + " kernels " + db.string() + " > /dev/null");
  std::printf("gpuscope kernels           %.2f s, peak RSS %.0f MB\n", kernels_s, kernels_rss);
  const fs::path json = dir / "trace.json";
  auto [export_s, export_rss] = run_measured(gpuscope + " export --perfetto " + json.string() +
                                             " " + db.string() + " 2> /dev/null");
  std::printf("gpuscope export --perfetto %.2f s, peak RSS %.0f MB, %.0f MB of JSON\n", export_s,
              export_rss, static_cast<double>(fs::file_size(json)) / 1e6);
  fs::remove_all(dir);
  return 0;
}
