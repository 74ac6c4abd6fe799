#include "app/analysis_loader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "analyze/analyzer.hpp"
#include "analyze/carbon.hpp"
#include "analyze/derived.hpp"
#include "analyze/processes.hpp"
#include "analyze/work_units.hpp"
#include "carbon/electricity_maps.hpp"
#include "carbon/http_get.hpp"
#include "carbon/series_file.hpp"
#include "carbon/uk_grid.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/event_kinds.hpp"
#include "core/json_text.hpp"
#include "report/analysis_view.hpp"
#include "store/grid_tables.hpp"
#include "store/run_codec.hpp"
#include "store/run_reader.hpp"
#include "util/command_line.hpp"
#include "util/environment.hpp"
#include "util/ordered_parallel.hpp"
#include "util/output_file.hpp"

namespace gpuscope::app {
namespace {

// Differences of two int64 nanosecond stamps from a file cannot overflow in 128 bits.
__extension__ typedef __int128 WideInt;

namespace fs = std::filesystem;
using analyze::Analyzer;
using analyze::DeviceSeries;
using analyze::GpuKey;
using analyze::RunMeta;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Every database named: files as given, directories expanded to their *.db files.
std::vector<fs::path> expand_inputs(const std::vector<std::string>& inputs) {
  if (inputs.empty()) {
    throw Error::usage("no run database to analyze", {},
                       "give one or more: gpuscope analyze run.db (or a directory of them)");
  }
  std::vector<fs::path> files;
  for (const auto& input : inputs) {
    std::error_code error;
    if (fs::is_directory(input, error)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(input, error)) {
        if (entry.path().extension() == ".db") found.push_back(entry.path());
      }
      if (found.empty()) {
        throw Error::usage(fmt::format("{} holds no .db files", input), {},
                           "point at the directory gpuscope profile -o wrote");
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (!fs::exists(input, error)) {
      throw Error::usage(fmt::format("{} does not exist", input), {},
                         "check the path (gpuscope profile -o names the database)");
    } else {
      files.emplace_back(input);
    }
  }
  // One file named twice (or by two spellings, a link, a directory and a file in it) is read
  // once: counting it twice would double the job's energy.
  std::vector<fs::path> unique;
  for (const auto& file : files) {
    const bool seen = std::any_of(unique.begin(), unique.end(), [&](const fs::path& earlier) {
      return util::same_file(earlier, file);
    });
    if (seen) {
      fmt::print(stderr, "gpuscope: note: {} was named more than once; it is read once\n",
                 file.string());
      continue;
    }
    unique.push_back(file);
  }
  return unique;
}

// Where a run's timestamps land on the analysis' time axis (docs/analysis.md, "Time axis").
// The axis is wall-clock time since the earliest run start, so that runs on several hosts line
// up; within a run, though, time is the monotonic clock since the run's start. CLOCK_REALTIME
// steps (NTP, a VM migration, an operator's date command) and one stepped wall_ns would stretch
// the axis by the step, a year of empty time for a one-hour run; mono_ns never steps. A
// timestamp outside the run's own monotonic span cannot be one of its samples (a corrupted or
// edited file): it is left out and reported.
struct RunClock {
  static constexpr std::int64_t kSlackNs = 2'000'000'000;  // around the run's start and end
  double offset_s = 0;                                     // the run's start on the axis
  std::int64_t start_wall_ns = 0;
  std::int64_t start_mono_ns = 0;
  std::optional<std::int64_t> end_mono_ns;  // when the run recorded its end

  // Seconds on the axis of a timestamp taken at mono_ns; NaN when outside the run.
  double at(std::int64_t mono_ns) const {
    const WideInt since = static_cast<WideInt>(mono_ns) - start_mono_ns;
    if (since < -kSlackNs) return kNaN;
    if (end_mono_ns && static_cast<WideInt>(mono_ns) - *end_mono_ns > kSlackNs) return kNaN;
    return offset_s + static_cast<double>(since) / 1e9;
  }
  // How far the wall clock had stepped (s, signed) at a sample, against where it stood at start.
  double step_s(std::int64_t wall_ns, std::int64_t mono_ns) const {
    const WideInt now = static_cast<WideInt>(wall_ns) - mono_ns;
    const WideInt start = static_cast<WideInt>(start_wall_ns) - start_mono_ns;
    return static_cast<double>(now - start) / 1e9;
  }
};

// What placing one GPU's samples on the axis found.
struct TimeCheck {
  std::size_t rows = 0;
  std::size_t outside = 0;  // mono_ns outside the run: left out
  bool by_wall = false;     // every sample was outside: placed by wall clock instead
  std::size_t stepped = 0;  // samples whose wall clock had stepped
  double largest_step_s = 0;
  double first_step_at_s = kNaN;  // seconds into the run of the first stepped sample

  void merge(const TimeCheck& o) {
    rows += o.rows;
    outside += o.outside;
    by_wall = by_wall || o.by_wall;
    stepped += o.stepped;
    if (std::fabs(o.largest_step_s) > std::fabs(largest_step_s)) largest_step_s = o.largest_step_s;
    if (!std::isnan(o.first_step_at_s) &&
        (std::isnan(first_step_at_s) || o.first_step_at_s < first_step_at_s)) {
      first_step_at_s = o.first_step_at_s;
    }
  }
};

double seconds_since(std::int64_t wall_ns, std::int64_t t0) {
  return static_cast<double>(static_cast<WideInt>(wall_ns) - t0) / 1e9;
}

// Each sample's seconds on the axis into `t` (NaN: left out), and what was odd about them. A
// step is a change of wall − mono by more than 1 s plus 0.1 % of the time since the start, more
// than NTP's slewing (at most 0.05 %) can account for. Deterministic, so both passes agree.
TimeCheck place_samples(const RunClock& clock, std::span<const std::int64_t> wall,
                        std::span<const std::int64_t> mono, std::int64_t t0,
                        std::vector<double>& t) {
  TimeCheck check;
  const std::size_t n = std::min(wall.size(), mono.size());
  check.rows = n;
  t.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = clock.at(mono[i]);
    if (std::isnan(t[i])) {
      ++check.outside;
      continue;
    }
    const double into = t[i] - clock.offset_s;
    const double step = clock.step_s(wall[i], mono[i]);
    if (std::fabs(step) > 1.0 + 1e-3 * std::fabs(into)) {
      ++check.stepped;
      if (std::fabs(step) > std::fabs(check.largest_step_s)) check.largest_step_s = step;
      if (std::isnan(check.first_step_at_s)) check.first_step_at_s = into;
    }
  }
  if (n > 0 && check.outside == n) {
    // No sample fits the run's own start and end: those are what is wrong, not every sample.
    check.by_wall = true;
    check.outside = 0;
    for (std::size_t i = 0; i < n; ++i) t[i] = seconds_since(wall[i], t0);
  }
  return check;
}

// Drops the rows whose time is NaN from `t` and every non-empty column of `values`.
template <typename Columns>
void drop_unplaced(std::vector<double>& t, Columns& values) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (std::isnan(t[i])) continue;
    for (auto& v : values) {
      if (i < v.size()) v[kept] = v[i];
    }
    t[kept++] = t[i];
  }
  if (kept == t.size()) return;
  t.resize(kept);
  for (auto& v : values) {
    if (!v.empty()) v.resize(kept);
  }
}

std::string duration_text(double seconds) {
  const double a = std::fabs(seconds);
  const char* sign = seconds < 0 ? "-" : "+";
  if (a >= 2 * 86400.0) return fmt::format("{}{:.1f} days", sign, a / 86400);
  if (a >= 2 * 3600.0) return fmt::format("{}{:.1f} h", sign, a / 3600);
  return fmt::format("{}{:.1f} s", sign, a);
}

// A run of one input file, with its place on the analysis' run list.
struct Source {
  std::shared_ptr<store::RunReader> reader;
  std::int64_t run_id = 0;  // in its file
  std::size_t meta = 0;     // index into the analyzer's runs
  std::vector<DeviceDescription> devices;
  std::int64_t samples = 0;  // rows in the samples table
  RunClock clock;
  std::size_t index = 0;  // in the list of sources
};

// What makes two stored runs the same run: merge's key (same host, SLURM job, step, rank and
// start time).
struct RunIdentity {
  std::string source;
  std::string host;
  std::optional<std::string> job_id;
  std::optional<std::string> step_id;
  std::optional<int> rank;
  std::int64_t start_wall_ns = 0;
};

// The same run in two files (a rank's database and a merge that holds it) would be counted
// twice, doubling its energy: refused, as merge refuses it.
void refuse_duplicate_run(std::vector<RunIdentity>& seen, const store::StoredRun& run,
                          const fs::path& path) {
  RunIdentity identity{path.string(),          run.info.host,       run.info.slurm.job_id,
                       run.info.slurm.step_id, run.info.ranks.rank, run.info.start_wall_ns};
  for (const RunIdentity& other : seen) {
    if (other.host == identity.host && other.job_id == identity.job_id &&
        other.step_id == identity.step_id && other.rank == identity.rank &&
        other.start_wall_ns == identity.start_wall_ns) {
      throw Error::usage(
          other.source == identity.source
              ? fmt::format("{} holds the same run twice", identity.source)
              : fmt::format("{} and {} hold the same run", other.source, identity.source),
          fmt::format("host {}, rank {}", identity.host,
                      identity.rank ? std::to_string(*identity.rank) : std::string("-")),
          "name each run's database once (a merged database already holds its ranks)");
    }
  }
  seen.push_back(std::move(identity));
}

GpuKey key_of(const Source& source, const RunMeta& meta, unsigned device_index) {
  GpuKey key;
  key.run_id = static_cast<std::int64_t>(source.meta);
  key.host = meta.host;
  key.rank = meta.rank;
  key.device_index = device_index;
  for (const auto& d : source.devices) {
    if (d.index != device_index) continue;
    key.uuid = d.uuid.value_or("");
    key.name = d.name.value_or("");
    key.saturation_source = d.saturation_source;
    key.saturation_detail = d.saturation_detail;
  }
  return key;
}

// One note per distinct saturation source of the GPUs analysed, so the reader knows where SM
// active, tensor and DRAM came from, or why they are missing (docs/sources.md). Files older than
// schema 1.6 do not say: no note.
std::vector<std::string> saturation_notes(const analyze::Analysis& analysis) {
  const bool hosts = analysis.runs.size() > 1;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
  for (const auto& gpu : analysis.gpus) {
    if (!gpu.key.saturation_detail) continue;
    groups[{gpu.key.saturation_source.value_or(""), *gpu.key.saturation_detail}].push_back(
        gpu.key.label(hosts));
  }
  std::vector<std::string> notes;
  // Runs imported from gssr (docs/gssr.md): say what gssr did not record, once.
  const bool gssr = std::any_of(analysis.runs.begin(), analysis.runs.end(),
                                [](const auto& run) { return run.launcher == "gssr"; });
  if (gssr) {
    notes.push_back(
        "runs imported from gssr: gssr records no power, energy, temperatures or clocks, so "
        "there are no energy or carbon figures; its sample times are index x interval, not "
        "measured");
  }
  for (const auto& [key, labels] : groups) {
    const auto& [source, detail] = key;
    if (detail.starts_with("gssr")) continue;  // said above
    const std::string who = fmt::format("{}", fmt::join(labels, ", "));
    if (source.empty()) {
      notes.push_back(fmt::format(
          "{}: no saturation metrics ({}), so no efficiency score; on Volta and Ampere they come "
          "from DCGM (docs/sources.md)",
          who, detail));
    } else if (source == "dcgm") {
      notes.push_back(fmt::format("{}: saturation metrics from DCGM ({})", who, detail));
    }
  }
  return notes;
}

// One GPU of one run: the unit of work of both passes, and where its samples are read from
// (chunks where the file has them, rows for the rest).
struct DeviceJob {
  const Source* source = nullptr;
  unsigned device = 0;
  store::SamplePlan plan;
};

// Every (run, GPU) with samples, in the order a cursor over the run visits them; nullopt when the
// devices table does not account for every sample (then both passes read sequentially).
std::optional<std::vector<DeviceJob>> device_jobs(const std::vector<Source>& sources) {
  std::vector<DeviceJob> jobs;
  for (const auto& source : sources) {
    std::int64_t covered = 0;
    for (const auto& d : source.devices) {
      const store::SamplePlan plan = source.reader->sample_plan(source.run_id, d.index);
      if (plan.rows > 0) jobs.push_back({&source, d.index, plan});
      covered += plan.rows;
    }
    if (covered != source.samples) return std::nullopt;
  }
  return jobs;
}

// A worker thread's own connection (SQLite connections are not shared between threads), kept
// open while its jobs stay in the same file.
class WorkerReader {
 public:
  const store::RunReader& of(const Source& source) {
    if (!reader_ || reader_->path() != source.reader->path()) {
      reader_ = std::make_unique<store::RunReader>(store::RunReader::open(source.reader->path()));
    }
    return *reader_;
  }

 private:
  std::unique_ptr<store::RunReader> reader_;
};

// Reading and the per-GPU analysis run on two worker threads, which keep both cores of a small
// machine busy; this thread only merges their results in order.
unsigned reader_threads() {
  return std::clamp(std::thread::hardware_concurrency(), 1U, 2U);
}

struct ActivitySeries {
  std::vector<double> t, activity;
  const Source* source = nullptr;
  TimeCheck check;
};

// Pass 1: each GPU's activity, from two columns, read by GPU on worker threads.
void feed_activity(Analyzer& analyzer, const std::vector<DeviceJob>& jobs,
                   std::vector<TimeCheck>& checks) {
  const Metric columns[] = {Metric::SmActivePct, Metric::GpuUtilPct};
  const std::int64_t t0 = analyzer.t0_wall_ns();
  std::vector<WorkerReader> readers(reader_threads());
  std::vector<store::SampleColumns> buffers(reader_threads());
  util::ordered_parallel<ActivitySeries>(
      jobs.size(), reader_threads(), 2 * reader_threads(),
      [&](std::size_t j, unsigned worker, ActivitySeries& out) {
        const DeviceJob& job = jobs[j];
        store::SampleColumns& c = buffers[worker];
        readers[worker].of(*job.source).read_samples(job.plan, columns, c);
        const auto& sm = c.values[static_cast<std::size_t>(Metric::SmActivePct)];
        const auto& util = c.values[static_cast<std::size_t>(Metric::GpuUtilPct)];
        const std::size_t n = c.rows();
        out.source = job.source;
        out.check = place_samples(job.source->clock, c.wall_ns, c.mono_ns, t0, out.t);
        out.activity.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
          out.activity[i] = analyze::sample_activity(sm[i], util[i]);
        }
      },
      [&](ActivitySeries& series) {
        checks[series.source->index].merge(series.check);
        if (!series.t.empty()) analyzer.add_activity(series.t, series.activity);
      });
}

// Pass 1 when the GPUs cannot be listed up front: one cursor over each run.
void feed_activity_sequentially(Analyzer& analyzer, const std::vector<Source>& sources,
                                std::vector<TimeCheck>& checks) {
  const Metric columns[] = {Metric::SmActivePct, Metric::GpuUtilPct};
  std::vector<double> t, activity;
  std::vector<std::int64_t> wall, mono;
  for (const auto& source : sources) {
    auto cursor = source.reader->samples({source.run_id, std::nullopt}, columns);
    store::RunSample sample;
    std::optional<unsigned> device;
    auto flush = [&] {
      checks[source.index].merge(place_samples(source.clock, wall, mono, analyzer.t0_wall_ns(), t));
      if (!t.empty()) analyzer.add_activity(t, activity);
      t.clear();
      activity.clear();
      wall.clear();
      mono.clear();
    };
    while (cursor.next(sample)) {
      if (device != sample.row.device_index) {
        flush();
        device = sample.row.device_index;
      }
      wall.push_back(sample.row.wall_ns);
      mono.push_back(sample.row.mono_ns);
      activity.push_back(
          analyze::sample_activity(sample.row.get(Metric::SmActivePct).value_or(kNaN),
                                   sample.row.get(Metric::GpuUtilPct).value_or(kNaN)));
    }
    flush();
  }
}

void feed_power(const store::RunReader& reader, const Source& source, unsigned device,
                DeviceSeries& series) {
  auto cursor = reader.power_samples({source.run_id, device});
  store::RunPowerSample p;
  while (cursor.next(p)) {
    const double t = source.clock.at(p.row.mono_ns);
    if (!p.row.power_w || std::isnan(t)) continue;
    series.power_t_s.push_back(t);
    series.power_w.push_back(*p.row.power_w);
    series.power_energy_mj.push_back(p.row.energy_mj ? static_cast<double>(*p.row.energy_mj)
                                                     : std::numeric_limits<double>::quiet_NaN());
  }
}

void append_sample(const SampleRow& row, DeviceSeries& series, std::vector<std::int64_t>& wall,
                   std::vector<std::int64_t>& mono) {
  wall.push_back(row.wall_ns);
  mono.push_back(row.mono_ns);
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    series.values[m].push_back(row.present.test(m) ? row.values[m] : kNaN);
  }
}

// Pass 2: each GPU's every metric, read and analysed (Analyzer::prepare_device) on the worker
// threads, one GPU per worker in memory at a time; results are added in GPU order.
void feed_devices(Analyzer& analyzer, const std::vector<DeviceJob>& jobs,
                  const std::vector<RunMeta>& metas) {
  const std::int64_t t0 = analyzer.t0_wall_ns();
  std::vector<Metric> all;
  for (std::size_t m = 0; m < kMetricCount; ++m) all.push_back(static_cast<Metric>(m));
  std::vector<WorkerReader> readers(reader_threads());
  std::vector<store::SampleColumns> buffers(reader_threads());
  std::vector<DeviceSeries> series(reader_threads());
  util::ordered_parallel<analyze::PreparedDevice>(
      jobs.size(), reader_threads(), 2 * reader_threads(),
      [&](std::size_t j, unsigned worker, analyze::PreparedDevice& out) {
        const DeviceJob& job = jobs[j];
        const store::RunReader& reader = readers[worker].of(*job.source);
        store::SampleColumns& c = buffers[worker];
        DeviceSeries& d = series[worker];
        reader.read_samples(job.plan, all, c);
        d.clear();
        place_samples(job.source->clock, c.wall_ns, c.mono_ns, t0, d.t_s);
        for (std::size_t m = 0; m < kMetricCount; ++m) d.values[m].swap(c.values[m]);
        drop_unplaced(d.t_s, d.values);
        const RunMeta& meta = metas[job.source->meta];
        d.key = key_of(*job.source, meta, job.device);
        d.sampling_interval_s = meta.sampling_interval_s;
        feed_power(reader, *job.source, job.device, d);
        analyze::derive_metrics(d);
        out = analyzer.prepare_device(d);
      },
      [&](analyze::PreparedDevice& device) { analyzer.add_prepared(std::move(device)); });
}

// Pass 2 when the GPUs cannot be listed up front: one cursor over each run, one GPU at a time.
void feed_devices_sequentially(Analyzer& analyzer, const std::vector<Source>& sources,
                               const std::vector<RunMeta>& metas) {
  DeviceSeries series;
  std::vector<std::int64_t> wall, mono;
  for (const auto& source : sources) {
    const RunMeta& meta = metas[source.meta];
    auto cursor = source.reader->samples({source.run_id, std::nullopt});
    store::RunSample sample;
    std::optional<unsigned> device;
    auto flush = [&] {
      place_samples(source.clock, wall, mono, analyzer.t0_wall_ns(), series.t_s);
      drop_unplaced(series.t_s, series.values);
      if (device && !series.t_s.empty()) {
        series.key = key_of(source, meta, *device);
        series.sampling_interval_s = meta.sampling_interval_s;
        feed_power(*source.reader, source, *device, series);
        analyze::derive_metrics(series);
        analyzer.add_device(series);
      }
      series.clear();
      wall.clear();
      mono.clear();
    };
    while (cursor.next(sample)) {
      if (device != sample.row.device_index) {
        flush();
        device = sample.row.device_index;
      }
      append_sample(sample.row, series, wall, mono);
    }
    flush();
  }
}

void feed_events(Analyzer& analyzer, const std::vector<Source>& sources,
                 const std::vector<RunMeta>& metas, bool with_host) {
  for (const auto& source : sources) {
    auto cursor = source.reader->events({source.run_id, std::nullopt});
    store::RunEvent e;
    while (cursor.next(e)) {
      if (e.event.kind != EventKind::GpuLost || !e.event.device_index) continue;
      const double t = source.clock.at(e.event.mono_ns);
      if (std::isnan(t)) continue;
      analyzer.note_gpu_lost(key_of(source, metas[source.meta], *e.event.device_index), t,
                             with_host);
    }
  }
}

// Total work from the captured output: the first group of every match, summed.
std::optional<double> work_from_output(const std::vector<Source>& sources,
                                       const std::string& pattern) {
  const std::regex regex = analyze::compile_work_regex(pattern);
  double total = 0;
  std::size_t lines = 0, matches = 0;
  for (const auto& source : sources) {
    auto cursor = source.reader->output({source.run_id, std::nullopt});
    store::RunOutputLine line;
    while (cursor.next(line)) {
      ++lines;
      if (const auto amount = analyze::work_in_line(regex, line.line.text)) {
        total += *amount;
        ++matches;
      }
    }
  }
  if (lines == 0) {
    throw Error::usage("--work-regex needs the job's output, and none was recorded", {},
                       "profile with --capture-output, or give --work-units N");
  }
  if (matches == 0) {
    throw Error::usage(
        fmt::format("--work-regex '{}' matched none of the {} output lines", pattern, lines), {},
        "check the pattern against the output (the output table)");
  }
  return total;
}

// --carbon-url, else GPUSCOPE_CARBON_URL, else "" (the source's own).
std::string carbon_url(const AnalyzeOptions& o) {
  if (o.carbon_url) return *o.carbon_url;
  return util::environment_or_empty("GPUSCOPE_CARBON_URL");
}

// The grid's intensity over the runs' span from --carbon-source: as the first input stored it
// when it covers the span (reproducible, offline), else fetched and stored there. A source that
// cannot answer is a note and the yearly average, named as such: never a silent zero.
std::optional<IntensitySeries> grid_series_for_runs(const AnalyzeOptions& o,
                                                    const std::vector<RunMeta>& metas,
                                                    const std::vector<std::string>& inputs,
                                                    std::vector<std::string>& notes) {
  const bool uk = *o.carbon_source == "uk";
  if (!uk && *o.carbon_source != "electricitymaps") {
    throw Error::usage(fmt::format("unknown --carbon-source '{}'", *o.carbon_source), {},
                       "use uk (the UK Carbon Intensity API), electricitymaps (with a token), or "
                       "--carbon-series FILE for your own figures");
  }
  if (o.carbon_series) {
    throw Error::usage("--carbon-source and --carbon-series cannot be combined", {},
                       "give one of them");
  }
  if (o.carbon_intensity) {
    throw Error::usage("--carbon-source and --carbon-intensity cannot be combined", {},
                       "--carbon-intensity is one flat figure; give one of them");
  }
  // The UK area, or the Electricity Maps zone and its token (checked before anything is read).
  carbon::UkArea area;
  std::string token;
  if (uk) {
    area = carbon::parse_uk_area(o.carbon_region);
  } else {
    if (o.carbon_region.empty()) {
      throw Error::usage("--carbon-source electricitymaps needs --carbon-region ZONE", {},
                         "give the zone, e.g. DE, FR, GB, US-CAL-CISO");
    }
    area.name = o.carbon_region;
    std::optional<std::filesystem::path> token_file;
    if (o.carbon_token_file) token_file = *o.carbon_token_file;
    token = carbon::electricity_maps_token(token_file,
                                           util::environment_or_empty("ELECTRICITYMAPS_TOKEN"));
  }
  std::int64_t start = std::numeric_limits<std::int64_t>::max(), end = 0;
  for (const auto& m : metas) {
    start = std::min(start, m.start_wall_ns);
    end = std::max(end, m.end_wall_ns > 0 ? m.end_wall_ns : wall_now_ns());
  }
  if (metas.empty() || inputs.empty()) return std::nullopt;
  const std::string request = std::string(uk ? "uk:" : "electricitymaps:") + area.name;
  const std::filesystem::path store_in = inputs.front();
  // The day after the run too, where the API has it (forecasts 48 h ahead): the greener-start
  // estimate moves the job's energy profile over it.
  constexpr std::int64_t kDayNs = 24LL * 3600 * 1'000'000'000;
  const std::int64_t fetch_end = std::min(end + kDayNs, wall_now_ns() + 2 * kDayNs);
  auto covers = [&](const IntensitySeries& s) {
    return !s.periods.empty() && s.periods.front().start_wall_ns <= start &&
           s.periods.back().end_wall_ns >= end;
  };
  if (!o.carbon_refetch) {
    if (auto stored = store::load_grid_series(store_in, request); stored && covers(*stored)) {
      notes.push_back(
          fmt::format("grid intensity for {} as stored in {} (--carbon-refetch to "
                      "ask again)",
                      area.name, store_in.string()));
      return stored;
    }
  }
  carbon::FetchOptions fetch;
  fetch.base_url = carbon_url(o);
  IntensitySeries series;
  try {
    series = uk ? carbon::fetch_uk(area, start, std::max(end, fetch_end), fetch)
                : carbon::fetch_electricity_maps(area.name, token, start, end, fetch);
  } catch (const Error& e) {
    if (e.exit_code() == 2) throw;
    const std::string what = e.reason().empty() ? e.summary() : e.summary() + ": " + e.reason();
    fmt::print(stderr, "gpuscope: warning: {}; carbon is counted at the yearly average\n", what);
    notes.push_back(
        fmt::format("the grid intensity could not be fetched ({}); carbon is "
                    "counted at the yearly average named below",
                    what));
    return std::nullopt;
  }
  if (series.periods.empty()) {
    notes.push_back(
        fmt::format("the UK Carbon Intensity API had no figures for {} over the run; "
                    "carbon is counted at the yearly average named below",
                    area.name));
    return std::nullopt;
  }
  const bool forecast_only =
      std::all_of(series.periods.begin(), series.periods.end(),
                  [](const IntensityPeriod& p) { return p.kind == IntensityKind::Forecast; });
  if (forecast_only) {
    notes.push_back(fmt::format("{}: the API gives forecasts only{}, no measured figures",
                                series.region,
                                area.region_id || area.postcode ? " for regions" : " so far"));
  }
  try {
    store::save_grid_series(store_in, request, series, wall_now_ns());
  } catch (const Error& e) {
    notes.push_back(
        fmt::format("the fetched grid intensity could not be stored in {} ({}); a "
                    "later analysis will fetch it again",
                    store_in.string(), e.reason().empty() ? e.summary() : e.reason()));
  }
  return series;
}

// The runs' phases (schema 1.5) on the analysis' time axis: names shared across runs, a track
// per source, run, process and thread (phases nest only within one).
void feed_phases(Analyzer& analyzer, const std::vector<Source>& sources) {
  std::vector<std::string> names;
  std::unordered_map<std::string, std::uint32_t> name_ids;
  std::vector<analyze::PhaseSpan> spans;
  std::map<std::tuple<std::size_t, int, std::int64_t, std::int64_t>, std::uint64_t> tracks;
  for (const auto& source : sources) {
    source.reader->for_each_phase(source.run_id, [&](Phase&& phase) {
      const double start = source.clock.at(phase.start_mono_ns);
      const double end = source.clock.at(phase.end_mono_ns);
      if (std::isnan(start) || std::isnan(end)) return;  // not of this run's clock
      analyze::PhaseSpan span;
      auto [it, added] = name_ids.try_emplace(phase.name, static_cast<std::uint32_t>(names.size()));
      if (added) names.push_back(phase.name);
      span.name = it->second;
      span.instance = phase.instance;
      span.source = phase.source;
      span.run = source.meta;
      span.device_index = phase.device_index;
      const auto key = std::make_tuple(source.meta, static_cast<int>(phase.source),
                                       phase.pid.value_or(-1), phase.tid.value_or(-1));
      span.track = tracks.try_emplace(key, tracks.size()).first->second;
      span.start_s = start;
      span.end_s = std::max(end, start);
      span.point = phase.point;
      span.closed = phase.closed;
      spans.push_back(std::move(span));
    });
  }
  analyzer.set_phases(std::move(names), std::move(spans));
}

// Which processes used each GPU (schema 1.3), and the diagnosis of those outside the job.
void read_processes(analyze::Analysis& analysis, const std::vector<Source>& sources,
                    const std::vector<RunMeta>& metas) {
  const bool several = metas.size() > 1;
  for (const auto& source : sources) {
    analyze::RunProcesses run;
    run.run_id = metas[source.meta].run_id;
    run.samples = source.reader->process_samples(source.run_id);
    if (run.samples.empty()) continue;
    run.processes = source.reader->processes(source.run_id);
    const RunMeta& meta = metas[source.meta];
    if (several) run.where = meta.host + (meta.rank ? fmt::format(" rank {} ", *meta.rank) : " ");
    const RunClock& clock = source.clock;
    auto uses = analyze::summarise_processes(
        run, [&clock](std::int64_t mono_ns) { return clock.at(mono_ns); });
    for (auto& use : uses) analysis.processes.push_back(std::move(use));
  }
  for (auto& finding : analyze::process_findings(analysis.processes)) {
    analysis.findings.push_back(std::move(finding));
  }
}

// Job events and captured output lines, for the report's timeline; output is capped.
std::vector<analyze::Mark> read_marks(const std::vector<Source>& sources,
                                      const std::vector<RunMeta>& metas, const LoadExtras& extras) {
  std::vector<analyze::Mark> marks;
  const bool several = metas.size() > 1;
  std::size_t lines = 0;
  for (const auto& source : sources) {
    const RunMeta& meta = metas[source.meta];
    const std::string where =
        several ? meta.host + (meta.rank ? fmt::format(" rank {}", *meta.rank) : "") : "";
    auto events = source.reader->events({source.run_id, std::nullopt});
    store::RunEvent e;
    while (events.next(e)) {
      std::string at = where;
      if (e.event.device_index)
        at += fmt::format("{}GPU {}", at.empty() ? "" : " ", *e.event.device_index);
      const double t = source.clock.at(e.event.mono_ns);
      if (!std::isnan(t))
        marks.push_back({t, std::string(e.event.kind.text()), e.event.detail, at});
    }
    auto output = source.reader->output({source.run_id, std::nullopt});
    store::RunOutputLine line;
    while (output.next(line) && lines < extras.max_output_lines) {
      const double t = source.clock.at(line.line.mono_ns);
      if (std::isnan(t)) continue;
      ++lines;
      marks.push_back({t, line.line.stream == OutputStream::Stderr ? "stderr" : "stdout",
                       line.line.text, where});
    }
  }
  std::stable_sort(marks.begin(), marks.end(),
                   [](const auto& a, const auto& b) { return a.t_s < b.t_s; });
  return marks;
}

// The clock steps and misplaced timestamps pass 1 found, as diagnosis lines and notes.
void report_time_checks(Analyzer& analyzer, const std::vector<Source>& sources,
                        const std::vector<RunMeta>& metas, const std::vector<TimeCheck>& checks) {
  const bool several = metas.size() > 1;
  for (const auto& source : sources) {
    const TimeCheck& c = checks[source.index];
    const RunMeta& meta = metas[source.meta];
    const std::string run = several
                                ? fmt::format("run {} ({}{})", meta.run_id, meta.host,
                                              meta.rank ? fmt::format(" rank {}", *meta.rank) : "")
                                : std::string("the run");
    if (c.stepped > 0) {
      analyzer.note_data_problem(
          "clock_step",
          fmt::format("the wall clock of {} stepped by {} {:.1f} s into it ({} of {} samples; "
                      "NTP or a virtual machine migration?)",
                      run, duration_text(c.largest_step_s), c.first_step_at_s, c.stepped, c.rows),
          fmt::format("{}: times follow the monotonic clock from the run's start, so the "
                      "wall-clock step does not stretch the time axis",
                      run));
    }
    if (c.outside > 0) {
      analyzer.note_data_problem(
          "bad_timestamps",
          fmt::format("{} of {} samples of {} have a monotonic time outside the run's start and "
                      "end (a damaged or edited file?)",
                      c.outside, c.rows, run),
          fmt::format("{}: {} samples outside the run were left out", run, c.outside));
    }
    if (c.by_wall) {
      analyzer.note_data_problem(
          "bad_timestamps",
          fmt::format("the monotonic start and end recorded for {} match none of its samples "
                      "(a damaged or edited file?)",
                      run),
          fmt::format("{}: samples were placed by their wall-clock time instead", run));
    }
  }
}

}  // namespace

analyze::Analysis load_analysis(const AnalyzeOptions& o, const LoadExtras& extras) {
  if (o.carbon_intensity && o.region) {
    throw Error::usage("--carbon-intensity and --region cannot be combined", {},
                       "--carbon-intensity overrides any region; give one of them");
  }
  if (o.region && !analyze::find_region(*o.region)) {
    std::string codes;
    for (const auto& r : analyze::builtin_regions())
      codes += (codes.empty() ? "" : ", ") + std::string(r.code);
    throw Error::usage(fmt::format("unknown region '{}'", *o.region), {},
                       fmt::format("use one of {} or --carbon-intensity G", codes));
  }
  if (o.pue < 1.0) throw Error::usage("--pue must be at least 1");
  if (o.carbon_intensity && *o.carbon_intensity < 0) {
    throw Error::usage("--carbon-intensity must not be negative");
  }
  analyze::AnalysisOptions options;
  options.trim = analyze::parse_trim_mode(o.trim);
  options.resolution_s = o.resolution_s;
  options.straggler_threshold = o.straggler_threshold;
  options.carbon_g_per_kwh = o.carbon_intensity;
  options.region = o.region;
  if (o.carbon_series) {
    options.grid_series = carbon::read_series_file(*o.carbon_series);
    if (o.region) options.grid_series->region = *o.region;
  }
  options.pue = o.pue;
  options.work_units = o.work_units;
  options.work_name = o.work_name;
  options.gpu_grid_metrics = extras.gpu_grid_metrics;
  options.gpu_grid_bins = extras.gpu_grid_bins;

  std::vector<Source> sources;
  std::vector<RunMeta> metas;
  std::vector<std::string> input_names;
  std::vector<RunIdentity> identities;
  std::int64_t samples = 0;
  for (const auto& path : expand_inputs(o.inputs)) {
    auto reader = std::make_shared<store::RunReader>(store::RunReader::open(path));
    input_names.push_back(path.string());
    for (const auto& run : reader->runs()) {
      refuse_duplicate_run(identities, run, path);
      RunMeta meta;
      meta.run_id = run.run_id;
      meta.source = path.string();
      meta.host = run.info.host;
      meta.rank = run.info.ranks.rank;
      meta.launcher = run.info.ranks.launcher;
      meta.job_id = run.info.ranks.job_id;
      meta.local_rank = run.info.ranks.local_rank;
      meta.world_size = run.info.ranks.world_size;
      meta.node_name = run.info.ranks.node_name;
      meta.pod_name = run.info.ranks.pod_name;
      meta.pod_namespace = run.info.ranks.pod_namespace;
      meta.label = run.info.label;
      meta.command_line = util::shell_command_line(run.info.command);
      meta.start_wall_ns = run.info.start_wall_ns;
      meta.end_wall_ns = run.end.end_wall_ns;
      meta.sampling_interval_s = static_cast<double>(run.info.sampling_interval_ns) / 1e9;
      meta.status = std::string(store::status_text(run.end.status));
      meta.exit_code = run.end.exit_code;
      meta.scenario = run.info.scenario;
      const std::int64_t run_samples = reader->count_samples({run.run_id, std::nullopt});
      samples += run_samples;
      Source source{reader,     run.run_id, metas.size(), reader->devices(run.run_id), run_samples,
                    RunClock{}, 0};
      source.clock.start_wall_ns = run.info.start_wall_ns;
      source.clock.start_mono_ns = run.info.start_mono_ns;
      if (run.end.status != RunStatus::Running && run.end.end_mono_ns >= run.info.start_mono_ns) {
        source.clock.end_mono_ns = run.end.end_mono_ns;
      }
      source.index = sources.size();
      sources.push_back(std::move(source));
      metas.push_back(std::move(meta));
    }
  }
  if (metas.empty())
    throw Error::usage("the input holds no run", {}, "is it a gpuscope run database?");
  if (samples == 0) {
    throw Error(fmt::format("no samples to analyze in {}", fmt::join(input_names, ", ")),
                "the job ended before the first sample, or no GPU was selected",
                "profile a longer job, or check gpuscope devices");
  }
  if (!o.work_regex.empty()) {
    if (o.work_units) throw Error::usage("--work-regex and --work-units cannot be combined");
    options.work_units = work_from_output(sources, o.work_regex);
  }

  bool several = metas.size() > 1;
  std::vector<std::string> carbon_notes;
  if (o.carbon_source) {
    options.grid_series = grid_series_for_runs(o, metas, input_names, carbon_notes);
  }
  Analyzer analyzer(options, metas);
  for (auto& source : sources) source.clock.offset_s = analyzer.t0_offset_s(metas[source.meta]);
  std::vector<TimeCheck> checks(sources.size());
  const auto jobs = device_jobs(sources);
  if (jobs) {
    feed_activity(analyzer, *jobs, checks);
  } else {
    feed_activity_sequentially(analyzer, sources, checks);
  }
  report_time_checks(analyzer, sources, metas, checks);
  analyzer.finish_activity();
  feed_phases(analyzer, sources);
  if (jobs) {
    feed_devices(analyzer, *jobs, metas);
  } else {
    feed_devices_sequentially(analyzer, sources, metas);
  }
  feed_events(analyzer, sources, metas, several);
  analyze::Analysis analysis = analyzer.finish();
  analysis.inputs = input_names;
  if (extras.marks) analysis.marks = read_marks(sources, metas, extras);
  read_processes(analysis, sources, metas);
  analysis.notes.insert(analysis.notes.end(), carbon_notes.begin(), carbon_notes.end());
  const auto saturation = saturation_notes(analysis);
  analysis.notes.insert(analysis.notes.end(), saturation.begin(), saturation.end());
  return analysis;
}

void print_carbon_regions(const AnalyzeOptions& o) {
  // The regions, with the API's current forecast for each when it answers.
  std::map<int, double> forecast;
  std::string when;
  try {
    const std::string base = carbon_url(o);
    const auto r =
        carbon::http_get((base.empty() ? std::string(carbon::kUkApiUrl) : base) + "/regional",
                         {"Accept: application/json"}, std::chrono::milliseconds(5000));
    const auto doc = nlohmann::json::parse(r.body);
    const auto& entry = doc.at("data").at(0);
    when = entry.value("from", "");
    for (const auto& region : entry.at("regions")) {
      forecast[region.at("regionid").get<int>()] =
          region.at("intensity").at("forecast").get<double>();
    }
  } catch (const std::exception&) {
    when.clear();  // offline: the names alone
  }
  fmt::print(
      "UK Carbon Intensity API regions (--carbon-source uk --carbon-region ID|NAME|POSTCODE"
      "; GB for Great Britain){}\n",
      when.empty() ? "" : ", forecast for " + when);
  for (const auto& region : carbon::uk_regions()) {
    auto it = forecast.find(region.id);
    fmt::print("  {:>2}  {:<26}{}\n", region.id, region.name,
               it == forecast.end() ? "" : fmt::format("{:>5.0f} gCO2e/kWh", it->second));
  }
}

void print_analysis(const analyze::Analysis& analysis, const AnalyzeOptions& o) {
  const auto view = report::parse_view(o.aggregate);
  const auto metrics = report::parse_metrics(o.metrics);
  if (o.json) {
    fmt::print("{}\n", json_text(report::analysis_json(analysis), 2));
  } else if (o.csv) {
    fmt::print("{}", report::analysis_csv(analysis, view, metrics));
  } else {
    const bool color = !o.no_color && isatty(STDOUT_FILENO) != 0;
    fmt::print("{}", report::analysis_text(analysis, view, metrics, color));
  }
}

std::vector<fs::path> named_input_files(const std::vector<std::string>& inputs) {
  std::vector<fs::path> files;
  for (const auto& input : inputs) {
    files.emplace_back(input);
    std::error_code error;
    if (!fs::is_directory(input, error)) continue;
    for (const auto& entry : fs::directory_iterator(input, error)) {
      if (entry.path().extension() == ".db") files.push_back(entry.path());
    }
  }
  return files;
}

}  // namespace gpuscope::app
