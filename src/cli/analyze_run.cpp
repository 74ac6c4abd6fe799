#include "cli/analyze_run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>

#include "analyze/analyzer.hpp"
#include "analyze/carbon.hpp"
#include "analyze/work_units.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "report/analysis_view.hpp"
#include "store/run_reader.hpp"
#include "util/output_file.hpp"

namespace gpuscope::cli {
namespace {

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

// A run of one input file, with its place on the analysis' run list.
struct Source {
  std::shared_ptr<store::RunReader> reader;
  std::int64_t run_id = 0;  // in its file
  std::size_t meta = 0;     // index into the analyzer's runs
  std::vector<DeviceDescription> devices;
  std::int64_t samples = 0;  // rows in the samples table
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
                       run.info.slurm.step_id, run.info.slurm.rank, run.info.start_wall_ns};
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

std::string command_line(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& a : argv) text += (text.empty() ? "" : " ") + a;
  return text;
}

std::string status_word(RunStatus status) {
  switch (status) {
    case RunStatus::Running:
      return "running";
    case RunStatus::Finished:
      return "finished";
    case RunStatus::Signaled:
      return "signaled";
    case RunStatus::TimedOut:
      return "timed_out";
    case RunStatus::NotStarted:
      return "not_started";
  }
  return "unknown";
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
  }
  return key;
}

double seconds_since(std::int64_t wall_ns, std::int64_t t0) {
  return static_cast<double>(wall_ns - t0) / 1e9;
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

// Runs produce(job, worker, result) for jobs 0..n−1 on `workers` threads and hands each result to
// consume(result) on the calling thread in job order, so the analysis sees exactly the sequence
// a single cursor would give. At most `slots` results exist at once (memory stays bounded by
// the slot count, not the job count). The first exception, a worker's or consume's, is rethrown.
template <typename Result, typename Produce, typename Consume>
void ordered_parallel(std::size_t jobs, unsigned workers, std::size_t slots, Produce produce,
                      Consume consume) {
  struct Slot {
    Result result;
    std::size_t job = 0;
    bool ready = false;
  };
  std::vector<Slot> ring(slots);
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t next_job = 0, consumed = 0;
  bool stop = false;
  std::exception_ptr failure;
  auto fail = [&] {
    const std::lock_guard lock(mutex);
    if (!failure) failure = std::current_exception();
    stop = true;
    changed.notify_all();
  };
  auto work = [&](unsigned worker) {
    for (;;) {
      std::size_t job = 0;
      {
        std::unique_lock lock(mutex);
        if (stop || next_job >= jobs) return;
        job = next_job++;
        changed.wait(lock, [&] { return stop || job < consumed + slots; });  // its slot is free
        if (stop) return;
      }
      Slot& slot = ring[job % slots];
      try {
        produce(job, worker, slot.result);
      } catch (...) {
        fail();
        return;
      }
      {
        const std::lock_guard lock(mutex);
        slot.job = job;
        slot.ready = true;
      }
      changed.notify_all();
    }
  };
  std::vector<std::jthread> threads;
  for (unsigned w = 0; w < workers; ++w) threads.emplace_back(work, w);
  try {
    for (std::size_t job = 0; job < jobs; ++job) {
      Slot& slot = ring[job % slots];
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stop || (slot.ready && slot.job == job); });
        if (stop) break;
      }
      consume(slot.result);
      {
        const std::lock_guard lock(mutex);
        slot.ready = false;
        ++consumed;
      }
      changed.notify_all();
    }
  } catch (...) {
    fail();
  }
  threads.clear();  // joins
  if (failure) std::rethrow_exception(failure);
}

// Reading and the per-GPU analysis run on two worker threads, which keep both cores of a small
// machine busy; this thread only merges their results in order.
unsigned reader_threads() {
  return std::clamp(std::thread::hardware_concurrency(), 1U, 2U);
}

struct ActivitySeries {
  std::vector<double> t, activity;
};

// Pass 1: each GPU's activity, from two columns, read by GPU on worker threads.
void feed_activity(Analyzer& analyzer, const std::vector<DeviceJob>& jobs) {
  const Metric columns[] = {Metric::SmActivePct, Metric::GpuUtilPct};
  const std::int64_t t0 = analyzer.t0_wall_ns();
  std::vector<WorkerReader> readers(reader_threads());
  std::vector<store::SampleColumns> buffers(reader_threads());
  ordered_parallel<ActivitySeries>(
      jobs.size(), reader_threads(), 2 * reader_threads(),
      [&](std::size_t j, unsigned worker, ActivitySeries& out) {
        const DeviceJob& job = jobs[j];
        store::SampleColumns& c = buffers[worker];
        readers[worker].of(*job.source).read_samples(job.plan, columns, c);
        const auto& sm = c.values[static_cast<std::size_t>(Metric::SmActivePct)];
        const auto& util = c.values[static_cast<std::size_t>(Metric::GpuUtilPct)];
        const std::size_t n = c.rows();
        out.t.resize(n);
        out.activity.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
          out.t[i] = seconds_since(c.wall_ns[i], t0);
          out.activity[i] = analyze::sample_activity(sm[i], util[i]);
        }
      },
      [&](ActivitySeries& series) {
        if (!series.t.empty()) analyzer.add_activity(series.t, series.activity);
      });
}

// Pass 1 when the GPUs cannot be listed up front: one cursor over each run.
void feed_activity_sequentially(Analyzer& analyzer, const std::vector<Source>& sources) {
  const Metric columns[] = {Metric::SmActivePct, Metric::GpuUtilPct};
  std::vector<double> t, activity;
  for (const auto& source : sources) {
    auto cursor = source.reader->samples({source.run_id, std::nullopt}, columns);
    store::RunSample sample;
    std::optional<unsigned> device;
    auto flush = [&] {
      if (!t.empty()) analyzer.add_activity(t, activity);
      t.clear();
      activity.clear();
    };
    while (cursor.next(sample)) {
      if (device != sample.row.device_index) {
        flush();
        device = sample.row.device_index;
      }
      t.push_back(seconds_since(sample.row.wall_ns, analyzer.t0_wall_ns()));
      activity.push_back(
          analyze::sample_activity(sample.row.get(Metric::SmActivePct).value_or(kNaN),
                                   sample.row.get(Metric::GpuUtilPct).value_or(kNaN)));
    }
    flush();
  }
}

void feed_power(const store::RunReader& reader, std::int64_t run_id, unsigned device,
                std::int64_t t0, DeviceSeries& series) {
  auto cursor = reader.power_samples({run_id, device});
  store::RunPowerSample p;
  while (cursor.next(p)) {
    if (!p.row.power_w) continue;
    series.power_t_s.push_back(seconds_since(p.row.wall_ns, t0));
    series.power_w.push_back(*p.row.power_w);
    series.power_energy_mj.push_back(p.row.energy_mj ? static_cast<double>(*p.row.energy_mj)
                                                     : std::numeric_limits<double>::quiet_NaN());
  }
}

void append_sample(const SampleRow& row, std::int64_t t0, DeviceSeries& series) {
  series.t_s.push_back(seconds_since(row.wall_ns, t0));
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
  ordered_parallel<analyze::PreparedDevice>(
      jobs.size(), reader_threads(), 2 * reader_threads(),
      [&](std::size_t j, unsigned worker, analyze::PreparedDevice& out) {
        const DeviceJob& job = jobs[j];
        const store::RunReader& reader = readers[worker].of(*job.source);
        store::SampleColumns& c = buffers[worker];
        DeviceSeries& d = series[worker];
        reader.read_samples(job.plan, all, c);
        d.clear();
        d.t_s.resize(c.rows());
        for (std::size_t i = 0; i < c.rows(); ++i) d.t_s[i] = seconds_since(c.wall_ns[i], t0);
        for (std::size_t m = 0; m < kMetricCount; ++m) d.values[m].swap(c.values[m]);
        const RunMeta& meta = metas[job.source->meta];
        d.key = key_of(*job.source, meta, job.device);
        d.sampling_interval_s = meta.sampling_interval_s;
        feed_power(reader, job.source->run_id, job.device, t0, d);
        out = analyzer.prepare_device(d);
      },
      [&](analyze::PreparedDevice& device) { analyzer.add_prepared(std::move(device)); });
}

// Pass 2 when the GPUs cannot be listed up front: one cursor over each run, one GPU at a time.
void feed_devices_sequentially(Analyzer& analyzer, const std::vector<Source>& sources,
                               const std::vector<RunMeta>& metas) {
  DeviceSeries series;
  for (const auto& source : sources) {
    const RunMeta& meta = metas[source.meta];
    auto cursor = source.reader->samples({source.run_id, std::nullopt});
    store::RunSample sample;
    std::optional<unsigned> device;
    auto flush = [&] {
      if (device && !series.t_s.empty()) {
        series.key = key_of(source, meta, *device);
        series.sampling_interval_s = meta.sampling_interval_s;
        feed_power(*source.reader, source.run_id, *device, analyzer.t0_wall_ns(), series);
        analyzer.add_device(series);
      }
      series.clear();
    };
    while (cursor.next(sample)) {
      if (device != sample.row.device_index) {
        flush();
        device = sample.row.device_index;
      }
      append_sample(sample.row, analyzer.t0_wall_ns(), series);
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
      if (e.event.kind != "gpu_lost" || !e.event.device_index) continue;
      analyzer.note_gpu_lost(key_of(source, metas[source.meta], *e.event.device_index),
                             seconds_since(e.event.wall_ns, analyzer.t0_wall_ns()), with_host);
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

// Job events and captured output lines, for the report's timeline; output is capped.
std::vector<analyze::Mark> read_marks(const std::vector<Source>& sources,
                                      const std::vector<RunMeta>& metas, std::int64_t t0,
                                      const LoadExtras& extras) {
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
      marks.push_back({seconds_since(e.event.wall_ns, t0), e.event.kind, e.event.detail, at});
    }
    auto output = source.reader->output({source.run_id, std::nullopt});
    store::RunOutputLine line;
    while (output.next(line) && lines < extras.max_output_lines) {
      ++lines;
      marks.push_back({seconds_since(line.line.wall_ns, t0),
                       line.line.stream == OutputStream::Stderr ? "stderr" : "stdout",
                       line.line.text, where});
    }
  }
  std::stable_sort(marks.begin(), marks.end(),
                   [](const auto& a, const auto& b) { return a.t_s < b.t_s; });
  return marks;
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
      meta.rank = run.info.slurm.rank;
      meta.label = run.info.label;
      meta.command_line = command_line(run.info.command);
      meta.start_wall_ns = run.info.start_wall_ns;
      meta.end_wall_ns = run.end.end_wall_ns;
      meta.sampling_interval_s = static_cast<double>(run.info.sampling_interval_ns) / 1e9;
      meta.status = status_word(run.end.status);
      meta.exit_code = run.end.exit_code;
      meta.scenario = run.info.scenario;
      const std::int64_t run_samples = reader->count_samples({run.run_id, std::nullopt});
      samples += run_samples;
      sources.push_back(
          {reader, run.run_id, metas.size(), reader->devices(run.run_id), run_samples});
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
  Analyzer analyzer(options, metas);
  if (const auto jobs = device_jobs(sources)) {
    feed_activity(analyzer, *jobs);
    analyzer.finish_activity();
    feed_devices(analyzer, *jobs, metas);
  } else {
    feed_activity_sequentially(analyzer, sources);
    analyzer.finish_activity();
    feed_devices_sequentially(analyzer, sources, metas);
  }
  feed_events(analyzer, sources, metas, several);
  analyze::Analysis analysis = analyzer.finish();
  analysis.inputs = input_names;
  if (extras.marks) analysis.marks = read_marks(sources, metas, analysis.t0_wall_ns, extras);
  return analysis;
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

}  // namespace gpuscope::cli
