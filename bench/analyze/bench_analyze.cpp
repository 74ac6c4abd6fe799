// `gpuscope analyze --json` on a synthetic run of 100 M metric values: wall time and peak memory
// (the child's ru_maxrss) of the real binary, run as a child process a few times.
//
// The run is 64 H100s as 8 ranks × 8 GPUs sampled at 10 Hz, written through RunWriter one file
// per rank and merged into one database (what `gpuscope merge` hands to `analyze` after a
// multi-node job). Every metric an H100 offers is present (34 of the catalog's 35; module power
// is Grace Hopper only), so 46 000 ticks (1 h 16 min 40 s) make 100.1 M values. The first
// 5 minutes are idle (trimming has work to do) and one GPU is a straggler (load balance has
// work to do). The database is cached under ${TMPDIR:-/tmp} and regenerated when missing or of
// another shape.
//
// With --carbon-series, a grid intensity series of one-minute periods over the run is written and
// passed to analyze (`--carbon-series`), so the interval join's cost shows against the plain run.
//
// Usage: bench_analyze [--shape default|gssr|ranks4096] [--ticks N] [--repeat N] [--regenerate]
// [--binary PATH] [--carbon-series] [--tasks N]
//
// With --tasks N, the distributed analysis too (docs/analysis.md §11): N tasks of `analyze
// --partial` started at once on this machine; each task's CPU time and peak memory (the cost of
// its share plus reading every file's small tables), the wall time until task 0 printed, the
// parts' sizes, and whether task 0 printed what one analyze printed.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bitset>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "store/merge.hpp"
#include "store/run_reader.hpp"
#include "store/run_writer.hpp"
#include "store/sqlite.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gpuscope;

// The run's shape (--shape): the default 100 M-value run, or gssr's (one GPU per rank, the 15
// per-sample metrics gssr records; its 16th, FB_TOTAL, is the device's memory total here), whose
// values are noisy doubles as gssr's are (SyntheticGpu::make_noisy).
struct Shape {
  std::string name = "default";
  unsigned ranks = 8;
  unsigned gpus_per_rank = 8;
  std::int64_t ticks = 46'000;
  bool gssr_metrics = false;  // only gssr's metrics in each row
  bool folder = false;        // analyse the folder of rank files, not one merged database
};
Shape g_shape;
constexpr std::int64_t kIntervalNs = 100'000'000;  // 10 Hz
constexpr double kIntervalS = 0.1;
constexpr double kIdleS = 300;  // the job's first 5 minutes: loading data, compiling
constexpr double kStepS = 1.2;  // one training step: compute, then an all-reduce
constexpr double kComputeS = 0.95;
constexpr unsigned kStragglerRank = 5, kStragglerGpu = 3;
constexpr double kStragglerFactor = 0.6;  // its SMs are busy 60 % as much as the others'
constexpr std::int64_t kBaseWallNs = 1'767'225'600'000'000'000;  // 2026-01-01T00:00:00Z
constexpr std::uint64_t kMemoryTotalBytes = 81559ULL << 20;
constexpr std::uint64_t kMemoryReservedBytes = 552ULL << 20;
// Part of the cache key: bump when the generated values change.
constexpr const char* kLabel = "bench_analyze v3";

struct Options {
  std::int64_t ticks = 0;  // 0: the shape's
  int repeat = 3;
  bool regenerate = false;
  bool carbon_series = false;  // also join a one-minute grid series (--carbon-series)
  int tasks = 0;               // also run the distributed analysis with this many tasks (--tasks N)
  std::string binary = GPUSCOPE_BENCH_GPUSCOPE;
};

// xorshift64*: fast, deterministic noise.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ULL + 1) {}
  // Uniform in [-1, 1).
  double symmetric() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    const std::uint64_t x = state_ * 0x2545F4914F6CDD1DULL;
    return static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0;
  }

 private:
  std::uint64_t state_;
};

// As gpuscope converts NVML's milliwatts: an integer divided by 1000.
double milliwatts(double watts) {
  return std::round(watts * 1000) / 1000.0;
}

// gssr's per-sample metrics, as `gpuscope import` maps them (docs/gssr.md).
const std::bitset<kMetricCount>& gssr_metrics() {
  static const std::bitset<kMetricCount> set = [] {
    std::bitset<kMetricCount> b;
    for (Metric m : {Metric::GpuUtilPct, Metric::MemoryUsedBytes, Metric::MemoryFreeBytes,
                     Metric::MemoryReservedBytes, Metric::SmActivePct, Metric::SmOccupancyPct,
                     Metric::TensorActivePct, Metric::DramActivePct, Metric::Fp64ActivePct,
                     Metric::Fp32ActivePct, Metric::Fp16ActivePct, Metric::PcieTxBytesPerS,
                     Metric::PcieRxBytesPerS, Metric::NvlinkTxBytesPerS, Metric::NvlinkRxBytesPerS})
      b.set(static_cast<std::size_t>(m));
    return b;
  }();
  return set;
}

// One simulated H100 over time: counters and slow quantities carry state between ticks.
class SyntheticGpu {
 public:
  SyntheticGpu(unsigned rank, unsigned gpu)
      : rng_(rank * 131 + gpu + 7),
        factor_(rank == std::min(kStragglerRank, g_shape.ranks - 1) &&
                        gpu == std::min(kStragglerGpu, g_shape.gpus_per_rank - 1)
                    ? kStragglerFactor
                    : 1.0),
        start_s_(kIdleS + (rng_.symmetric() + 1.0)),  // GPUs start working within 2 s
        phase_s_((rng_.symmetric() + 1.0) * 0.02),
        energy_mj_(3.6e9 + 1e8 * gpu),
        pcie_tx_(1e12 + 1e10 * rank),
        pcie_rx_(2e12 + 1e10 * rank) {}

  // gssr's data are noisy doubles, every value of a metric distinct (its generator writes
  // full-precision floats for all 16 metrics, DCGM's averages are never round): each value is
  // moved by a relative 1e-4 and an absolute 1e-6, percentages kept within [0, 100].
  void make_noisy(SampleRow& row) {
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      const auto metric = static_cast<Metric>(m);
      const auto v = row.get(metric);
      if (!v) continue;
      double noisy = *v * (1 + 1e-4 * rng_.symmetric()) + 1e-6 * (rng_.symmetric() + 1);
      if (info(metric).unit == std::string_view("%")) noisy = std::clamp(noisy, 0.0, 100.0);
      row.set(metric, noisy);
    }
  }

  void fill(double t, SampleRow& row) {
    const bool busy = t >= start_s_;
    const bool compute = busy && std::fmod(t - start_s_ + phase_s_, kStepS) < kComputeS;
    auto noisy = [&](double level, double amplitude) {
      return std::max(0.0, level + amplitude * rng_.symmetric());
    };
    auto pct = [](double v) { return std::clamp(v, 0.0, 100.0); };

    const double sm = pct(!busy ? 0 : compute ? noisy(88 * factor_, 3) : noisy(25, 5));
    const double instant_w = !busy ? noisy(70, 2) : noisy(150 + 5.4 * sm, 15);
    power_avg_w_ += (instant_w - power_avg_w_) * 0.1;  // the driver's 1 s average
    const bool capped = power_avg_w_ > 680;
    const double sm_clock = !busy ? 345 : capped ? 1755 : 1980;
    temperature_c_ += (31 + 0.055 * instant_w - temperature_c_) * (kIntervalS / 25);
    const double used = busy ? 71e9 + 1e8 * rng_.symmetric() : 5.2e8;
    const double pcie_tx_rate = busy ? noisy(compute ? 2e8 : 5e8, 5e7) : 1e5;
    const double pcie_rx_rate = busy ? noisy(compute ? 3e8 : 5e8, 5e7) : 1e5;
    const double nvlink_rate = !busy ? 0 : compute ? noisy(5e9, 1e9) : noisy(1.6e11, 1e10);
    energy_mj_ += instant_w * kIntervalS * 1000;
    pcie_tx_ += pcie_tx_rate * kIntervalS;
    pcie_rx_ += pcie_rx_rate * kIntervalS;

    row.present.reset();
    row.set(Metric::PowerW, milliwatts(power_avg_w_));  // NVML reports milliwatts
    row.set(Metric::PowerInstantW, milliwatts(instant_w));
    row.set(Metric::PowerAverageW, milliwatts(power_avg_w_));
    row.set(Metric::EnergyMj, std::floor(energy_mj_));
    row.set(Metric::PowerLimitW, 700);
    row.set(Metric::GpuUtilPct, !busy ? 0 : compute ? 100 : std::round(noisy(96, 3)));
    row.set(Metric::MemUtilPct, !busy ? 0 : std::round(noisy(compute ? 35 : 12, 4)));
    row.set(Metric::SmClockMhz, sm_clock);
    row.set(Metric::MemClockMhz, 2619);
    row.set(Metric::GraphicsClockMhz, sm_clock);
    row.set(Metric::TemperatureC, std::round(temperature_c_));
    row.set(Metric::MemoryTemperatureC, std::round(temperature_c_ + 4));
    row.set(Metric::MemoryUsedBytes, std::floor(used));
    row.set(Metric::MemoryFreeBytes,
            static_cast<double>(kMemoryTotalBytes - kMemoryReservedBytes) - std::floor(used));
    row.set(Metric::MemoryReservedBytes, static_cast<double>(kMemoryReservedBytes));
    row.set(Metric::ClockEventReasons, !busy ? 0x1 : capped ? 0x4 : 0);
    row.set(Metric::PcieTxBytes, std::floor(pcie_tx_));
    row.set(Metric::PcieRxBytes, std::floor(pcie_rx_));
    row.set(Metric::GraphicsActivePct, pct(!busy ? 0 : noisy(compute ? 97 : 90, 2)));
    row.set(Metric::SmActivePct, sm);
    row.set(Metric::SmOccupancyPct, pct(!busy ? 0 : compute ? noisy(45 * factor_, 3) : 10));
    const double tensor = pct(!busy ? 0 : compute ? noisy(55 * factor_, 5) : noisy(2, 1));
    row.set(Metric::TensorActivePct, tensor);
    row.set(Metric::DfmaTensorActivePct, 0);
    row.set(Metric::HmmaTensorActivePct, tensor);
    row.set(Metric::ImmaTensorActivePct, 0);
    row.set(Metric::DramActivePct, pct(!busy ? 0 : noisy(compute ? 38 : 15, 4)));
    row.set(Metric::Fp64ActivePct, 0);
    row.set(Metric::Fp32ActivePct, pct(!busy ? 0 : noisy(8 * factor_, 1)));
    row.set(Metric::Fp16ActivePct, pct(!busy ? 0 : noisy(12 * factor_, 2)));
    row.set(Metric::IntegerActivePct, pct(!busy ? 0 : noisy(6, 1)));
    row.set(Metric::PcieTxBytesPerS, pcie_tx_rate);
    row.set(Metric::PcieRxBytesPerS, pcie_rx_rate);
    row.set(Metric::NvlinkTxBytesPerS, nvlink_rate);
    row.set(Metric::NvlinkRxBytesPerS, nvlink_rate);
    if (g_shape.gssr_metrics) {
      row.present &= gssr_metrics();
      make_noisy(row);
    }
  }

 private:
  Rng rng_;
  double factor_;
  double start_s_;
  double phase_s_;
  double power_avg_w_ = 70;
  double temperature_c_ = 31;
  double energy_mj_;
  double pcie_tx_;
  double pcie_rx_;
};

RunInfo rank_run(unsigned rank) {
  RunInfo run;
  run.command = {"python", "train.py", "--config", "llama-8b.yaml"};
  run.label = kLabel;
  run.host = fmt::format("node{:02}", rank);
  run.user = "bench";
  run.start_wall_ns = kBaseWallNs + rank * 37'000'000LL;  // ranks start within a second
  run.start_mono_ns = 1'000'000'000'000LL + rank * 1'000'000LL;
  run.tool_version = "bench";
  run.sampling_interval_ns = kIntervalNs;
  run.driver_version = "550.54.15";
  run.cuda_visible_devices = g_shape.gpus_per_rank == 1 ? "0" : "0,1,2,3,4,5,6,7";
  run.slurm.job_id = "4242";
  run.slurm.step_id = "0";
  run.slurm.rank = static_cast<int>(rank);
  run.slurm.local_rank = 0;
  run.slurm.node_id = static_cast<int>(rank);
  run.slurm.node_name = run.host;
  run.slurm.ntasks = static_cast<int>(g_shape.ranks);
  run.slurm.step_gpus = run.cuda_visible_devices;
  return run;
}

std::vector<DeviceDescription> rank_devices(unsigned rank) {
  std::vector<DeviceDescription> out(g_shape.gpus_per_rank);
  for (unsigned g = 0; g < g_shape.gpus_per_rank; ++g) {
    DeviceDescription& d = out[g];
    d.index = g;
    d.name = "NVIDIA H100 80GB HBM3";
    d.uuid = fmt::format("GPU-{:08x}-bench-{:04x}-{:04x}", 0x5ca1ab1e, rank, g);
    d.pci_bus_id = fmt::format("00000000:{:02X}:00.0", 0x18 + 0x10 * g);
    d.architecture = "Hopper";
    d.compute_capability = "9.0";
    d.memory_total_bytes = kMemoryTotalBytes;
    d.power_limit_w = d.enforced_power_limit_w = d.default_power_limit_w = d.max_power_limit_w =
        700.0;
    d.min_power_limit_w = 200.0;
    d.max_sm_clock_mhz = d.max_graphics_clock_mhz = 1980;
    d.max_memory_clock_mhz = 2619;
    d.capabilities = {{"gpm", "GPM saturation metrics", true, ""},
                      {"energy_counter", "energy counter", true, ""}};
  }
  return out;
}

void write_rank(const fs::path& path, unsigned rank, std::int64_t ticks) {
  const RunInfo run = rank_run(rank);
  auto writer = store::RunWriter::create(path, true, run, rank_devices(rank));
  std::vector<SyntheticGpu> gpus;
  for (unsigned g = 0; g < g_shape.gpus_per_rank; ++g) gpus.emplace_back(rank, g);
  Rng jitter(rank + 1000);
  writer->push(
      Event{run.start_wall_ns, run.start_mono_ns, std::nullopt, EventKind::JobStart, "started"});
  SampleRow row;
  for (std::int64_t k = 0; k < ticks; ++k) {
    // The sampler's tick lands up to 0.5 ms late; every GPU of the tick shares it.
    const auto late_ns = static_cast<std::int64_t>((jitter.symmetric() + 1.0) * 250'000);
    for (unsigned g = 0; g < g_shape.gpus_per_rank; ++g) {
      row.device_index = g;
      row.wall_ns = run.start_wall_ns + k * kIntervalNs + late_ns + g * 20'000;
      row.mono_ns = run.start_mono_ns + k * kIntervalNs + late_ns + g * 20'000;
      gpus[g].fill(static_cast<double>(k) * kIntervalS, row);
      writer->push(row);
    }
    if (k % 2000 == 1999) writer->flush();  // keeps the writer's queue small
  }
  const std::int64_t end_offset_ns = ticks * kIntervalNs;
  writer->push(Event{run.start_wall_ns + end_offset_ns, run.start_mono_ns + end_offset_ns,
                     std::nullopt, EventKind::JobExit, "exited with status 0"});
  RunEnd end;
  end.status = RunStatus::Finished;
  end.end_wall_ns = run.start_wall_ns + end_offset_ns;
  end.end_mono_ns = run.start_mono_ns + end_offset_ns;
  end.exit_code = 0;
  end.samples_taken = ticks;
  const auto problems = writer->finish(end);
  if (!problems.empty()) throw std::runtime_error(problems.front());
}

struct RunShape {
  std::int64_t samples = 0;  // device-rows
  std::int64_t values = 0;   // non-NULL metric values
  std::size_t metrics_present = 0;
};

// The shape of the database at `path`, or nullopt when it is missing or not the one wanted.
std::optional<RunShape> cached_shape(const fs::path& path, std::int64_t ticks) {
  std::error_code error;
  if (!fs::exists(path, error)) return std::nullopt;
  try {
    const auto reader = store::RunReader::open(path);
    const auto runs = reader.runs();
    if (runs.size() != g_shape.ranks) return std::nullopt;
    for (const auto& run : runs) {
      if (run.info.label != kLabel || run.end.samples_taken != ticks) return std::nullopt;
    }
    RunShape shape;
    shape.samples = reader.count_samples();
    if (shape.samples != ticks * g_shape.ranks * g_shape.gpus_per_rank) return std::nullopt;
    auto cursor = reader.samples();
    store::RunSample sample;
    if (!cursor.next(sample)) return std::nullopt;
    shape.metrics_present = sample.row.present.count();
    shape.values = shape.samples * static_cast<std::int64_t>(shape.metrics_present);
    return shape;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The shape of a folder of rank files written by prepare_folder (its marker names the shape),
// or nullopt. Counting every file's samples would take longer than the analysis.
std::optional<RunShape> cached_folder(const fs::path& dir, std::int64_t ticks) {
  std::error_code error;
  const fs::path marker = dir / "complete";
  if (!fs::exists(marker, error)) return std::nullopt;
  std::FILE* f = std::fopen(marker.c_str(), "r");
  if (f == nullptr) return std::nullopt;
  char text[256] = {};
  const std::size_t got = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  const std::string want = fmt::format("{} {} {} {}\n", kLabel, g_shape.ranks, ticks, 15);
  if (std::string(text, got) != want) return std::nullopt;
  RunShape shape;
  shape.samples = ticks * g_shape.ranks * g_shape.gpus_per_rank;
  shape.metrics_present = 15;
  shape.values = shape.samples * 15;
  return shape;
}

// A folder of one file per rank, as `gpuscope profile` leaves it after a job, analysed as it is.
RunShape prepare_folder(const fs::path& dir, std::int64_t ticks, bool regenerate) {
  if (!regenerate) {
    if (auto shape = cached_folder(dir, ticks)) {
      fmt::print("using the cached rank files in {}\n", dir.string());
      return *shape;
    }
  }
  fmt::print("generating {} ({} rank files × {} GPUs × {} ticks)...\n", dir.string(), g_shape.ranks,
             g_shape.gpus_per_rank, ticks);
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (unsigned r = 0; r < g_shape.ranks; ++r) {
    write_rank(dir / fmt::format("rank{:05}.db", r), r, ticks);
  }
  std::FILE* f = std::fopen((dir / "complete").c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot write in " + dir.string());
  std::fprintf(f, "%s %u %lld %d\n", kLabel, g_shape.ranks, static_cast<long long>(ticks), 15);
  std::fclose(f);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  fmt::print("generated in {:.0f} s\n", took.count());
  auto shape = cached_folder(dir, ticks);
  if (!shape) throw std::runtime_error("the generated folder does not read back");
  return *shape;
}

RunShape prepare_database(const fs::path& path, std::int64_t ticks, bool regenerate) {
  if (!regenerate) {
    if (auto shape = cached_shape(path, ticks)) {
      fmt::print("using the cached run {}\n", path.string());
      return *shape;
    }
  }
  fmt::print("generating {} ({} ranks × {} GPUs × {} ticks)...\n", path.string(), g_shape.ranks,
             g_shape.gpus_per_rank, ticks);
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  const fs::path dir = path.parent_path() / (path.filename().string() + ".ranks");
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<fs::path> files;
  for (unsigned r = 0; r < g_shape.ranks; ++r) {
    files.push_back(dir / fmt::format("rank{}.db", r));
    write_rank(files.back(), r, ticks);
  }
  store::merge(path, files, true);
  fs::remove_all(dir);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  fmt::print("generated in {:.0f} s\n", took.count());
  auto shape = cached_shape(path, ticks);
  if (!shape) throw std::runtime_error("the generated database does not read back");
  return *shape;
}

// Bytes of the pages of `names` (tables and indexes), from SQLite's dbstat table.
double stored_bytes(const fs::path& path, std::initializer_list<std::string_view> names) {
  store::Database db(path, SQLITE_OPEN_READONLY);
  double total = 0;
  for (auto name : names) {
    store::Statement stmt = db.prepare("SELECT sum(pgsize) FROM dbstat WHERE name = ?");
    stmt.bind_static(1, name);
    if (stmt.step()) total += stmt.real(0);
  }
  return total;
}

struct Measurement {
  double wall_s = 0;
  double user_s = 0;
  double system_s = 0;
  double peak_rss_mb = 0;
};

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

// Runs `binary analyze --json db > json_path` and measures it.
Measurement run_analyze(const std::string& binary, const fs::path& db, const fs::path& json_path,
                        const fs::path& series) {
  std::fflush(stdout);  // the child must not print our buffered lines again
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (std::freopen(json_path.c_str(), "w", stdout) == nullptr) _exit(126);
    if (series.empty()) {
      execl(binary.c_str(), binary.c_str(), "analyze", "--json", db.c_str(),
            static_cast<char*>(nullptr));
    } else {
      execl(binary.c_str(), binary.c_str(), "analyze", "--json", db.c_str(), "--carbon-series",
            series.c_str(), static_cast<char*>(nullptr));
    }
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) throw std::runtime_error("wait4 failed");
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(fmt::format("{} analyze failed (status {})", binary, status));
  }
  return {took.count(), seconds(usage.ru_utime), seconds(usage.ru_stime),
          static_cast<double>(usage.ru_maxrss) / 1024.0};  // ru_maxrss is in KiB
}

// Runs `tasks` tasks of the distributed analysis of `db` at once; prints each task's figures and
// whether task 0's JSON is `single_json`'s.
void run_tasks(const std::string& binary, const fs::path& db, const fs::path& single_json,
               int tasks) {
  const fs::path parts = fs::path(single_json).replace_extension(".parts");
  fs::remove_all(parts);
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  for (int r = 0; r < tasks; ++r) {
    const std::string task = fmt::format("{}/{}", r, tasks);
    const fs::path out = fs::path(single_json).replace_extension(fmt::format(".task{}.json", r));
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      if (std::freopen(out.c_str(), "w", stdout) == nullptr) _exit(126);
      execl(binary.c_str(), binary.c_str(), "analyze", "--json", db.c_str(), "--partial",
            parts.c_str(), "--task", task.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    pids.push_back(pid);
  }
  fmt::print(
      "\n{} tasks of analyze --partial at once on this machine:\n{:>5}  {:>8}  {:>8}  "
      "{:>8}  {:>12}  {:>10}\n",
      tasks, "task", "wall s", "user s", "sys s", "peak RSS MB", "part MB");
  for (int r = 0; r < tasks; ++r) {
    int status = 0;
    rusage usage{};
    if (wait4(pids[static_cast<std::size_t>(r)], &status, 0, &usage) < 0) {
      throw std::runtime_error("wait4 failed");
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      throw std::runtime_error(fmt::format("task {} failed (status {})", r, status));
    }
    const fs::path part = parts / fmt::format("part-{}-of-{}.bin", r, tasks);
    fmt::print("{:>5}  {:>8.2f}  {:>8.2f}  {:>8.2f}  {:>12.1f}  {:>10.2f}\n", r, took.count(),
               seconds(usage.ru_utime), seconds(usage.ru_stime),
               static_cast<double>(usage.ru_maxrss) / 1024.0,
               static_cast<double>(fs::file_size(part)) / 1e6);
  }
  const fs::path first = fs::path(single_json).replace_extension(".task0.json");
  std::string a, b;
  for (auto [path, text] : {std::pair{single_json, &a}, std::pair{first, &b}}) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) throw std::runtime_error("cannot read " + path.string());
    char buffer[65536];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) text->append(buffer, n);
    std::fclose(f);
  }
  fmt::print("task 0's JSON is one analyze's, byte for byte: {}\n", a == b ? "yes" : "NO");
  if (a != b) throw std::runtime_error("the distributed analysis differs from one analyze");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--ticks") {
      o.ticks = std::stoll(value());
    } else if (arg == "--repeat") {
      o.repeat = std::stoi(value());
    } else if (arg == "--regenerate") {
      o.regenerate = true;
    } else if (arg == "--binary") {
      o.binary = value();
    } else if (arg == "--carbon-series") {
      o.carbon_series = true;
    } else if (arg == "--tasks") {
      o.tasks = std::stoi(value());
    } else if (arg == "--shape") {
      const std::string name = value();
      if (name == "gssr") {
        g_shape = Shape{"gssr", 64, 1, 36'000, true, false};
      } else if (name == "ranks4096") {
        g_shape = Shape{"ranks4096", 4096, 1, 6'000, true, true};
      } else if (name != "default") {
        throw std::runtime_error("--shape is default, gssr or ranks4096, not " + name);
      }
    } else {
      throw std::runtime_error("unknown argument " + arg +
                               " (use --shape default|gssr|ranks4096, --ticks N, --repeat N, "
                               "--regenerate, --binary PATH, "
                               "--carbon-series, --tasks N)");
    }
  }
  if (o.ticks == 0) o.ticks = g_shape.ticks;
  if (o.ticks < 1 || o.repeat < 1) throw std::runtime_error("--ticks and --repeat must be ≥ 1");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    const char* tmp = std::getenv("TMPDIR");
    const fs::path dir = tmp != nullptr && *tmp != '\0' ? fs::path(tmp) : fs::path("/tmp");
    const std::string stem =
        g_shape.name == "default"
            ? fmt::format("gpuscope-bench-analyze-{}", o.ticks)
            : fmt::format("gpuscope-bench-analyze-{}-{}", g_shape.name, o.ticks);
    const fs::path db = dir / (stem + (g_shape.folder ? ".ranks" : ".db"));
    const fs::path json = dir / (stem + ".json");
    const RunShape shape = g_shape.folder ? prepare_folder(db, o.ticks, o.regenerate)
                                          : prepare_database(db, o.ticks, o.regenerate);

    fmt::print(
        "\nrun: {} ranks × {} GPUs = {} GPUs, {} ticks at 10 Hz ({:.2f} h), {} of {} "
        "metrics present\n",
        g_shape.ranks, g_shape.gpus_per_rank, g_shape.ranks * g_shape.gpus_per_rank, o.ticks,
        static_cast<double>(o.ticks) * kIntervalS / 3600, shape.metrics_present, kMetricCount);
    if (g_shape.folder) {
      double bytes = 0;
      for (const auto& entry : fs::directory_iterator(db))
        bytes += static_cast<double>(entry.file_size());
      fmt::print("     {} device-rows, {:.1f} M metric values, {} rank files, {:.0f} MB\n",
                 shape.samples, static_cast<double>(shape.values) / 1e6, g_shape.ranks,
                 bytes / 1e6);
    } else {
      fmt::print("     {} device-rows, {:.1f} M metric values, database {:.0f} MB\n", shape.samples,
                 static_cast<double>(shape.values) / 1e6,
                 static_cast<double>(fs::file_size(db)) / 1e6);
      const double rows_mb = stored_bytes(db, {"samples", "samples_by_device"}) / 1e6;
      const double chunks_mb = stored_bytes(db, {"sample_chunks", "sample_chunks_by_device"}) / 1e6;
      fmt::print(
          "     samples table and index {:.0f} MB, sample_chunks and index {:.0f} MB "
          "(+{:.0f} % over the rows)\n",
          rows_mb, chunks_mb, 100 * chunks_mb / rows_mb);
    }
    fs::path series;
    if (o.carbon_series) {
      // One-minute periods from a minute before the first run's start to well after the end.
      series = dir / fmt::format("gpuscope-bench-analyze-{}-grid.csv", o.ticks);
      const auto runs = store::RunReader::open(db).runs();
      std::int64_t start_s = runs.front().info.start_wall_ns / 1'000'000'000 - 60;
      for (const auto& r : runs)
        start_s = std::min(start_s, r.info.start_wall_ns / 1'000'000'000 - 60);
      std::FILE* f = std::fopen(series.c_str(), "w");
      if (f == nullptr) throw std::runtime_error("cannot write " + series.string());
      std::fprintf(f, "start,end,g_per_kwh\n");
      const std::int64_t minutes = o.ticks / 600 + 3;
      for (std::int64_t m = 0; m < minutes; ++m) {
        std::fprintf(f, "%lld,%lld,%d\n", static_cast<long long>(start_s + 60 * m),
                     static_cast<long long>(start_s + 60 * (m + 1)),
                     100 + static_cast<int>(m % 200));
      }
      std::fclose(f);
      fmt::print("carbon series: {} one-minute periods ({})\n", minutes, series.string());
    }
    fmt::print("binary: {}\n\n", o.binary);

    fmt::print("{:>4}  {:>8}  {:>8}  {:>8}  {:>12}  {:>16}\n", "run", "wall s", "user s", "sys s",
               "peak RSS MB", "M values/s");
    std::vector<Measurement> all;
    for (int i = 0; i < o.repeat; ++i) {
      const Measurement m = run_analyze(o.binary, db, json, series);
      all.push_back(m);
      fmt::print("{:>4}  {:>8.2f}  {:>8.2f}  {:>8.2f}  {:>12.1f}  {:>16.1f}\n", i + 1, m.wall_s,
                 m.user_s, m.system_s, m.peak_rss_mb,
                 static_cast<double>(shape.values) / 1e6 / m.wall_s);
      std::fflush(stdout);
    }
    std::vector<double> walls;
    double peak = 0;
    for (const auto& m : all) {
      walls.push_back(m.wall_s);
      peak = std::max(peak, m.peak_rss_mb);
    }
    std::sort(walls.begin(), walls.end());
    const double median = walls[walls.size() / 2];
    fmt::print("\nmedian wall {:.2f} s (best {:.2f} s), peak RSS {:.1f} MB over {} runs\n", median,
               walls.front(), peak, all.size());
    if (g_shape.name == "ranks4096") {
      fmt::print("goals (4,096 rank files): wall < 5 s: {}; peak RSS < 300 MB: {}\n",
                 median < 5 ? "met" : "NOT met", peak < 300.0 ? "met" : "NOT met");
    } else if (g_shape.name == "gssr") {
      fmt::print("goals (gssr's shape): wall ≤ 0.25 s: {}; peak RSS ≤ 40 MB: {}\n",
                 median <= 0.25 ? "met" : "NOT met", peak <= 40.0 ? "met" : "NOT met");
    } else {
      fmt::print("goals (100 M values): wall ≤ 5 s: {}; peak RSS ≤ 500 MB: {}\n",
                 median <= 5.0 ? "met" : "NOT met", peak <= 500.0 ? "met" : "NOT met");
    }
    if (o.tasks > 0) run_tasks(o.binary, db, json, o.tasks);
    fmt::print("last report: {}\n", json.string());
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_analyze: {}\n", e.what());
    return 1;
  }
}
