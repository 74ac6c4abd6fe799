#include "load/passes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "analyze/derived.hpp"
#include "core/event_kinds.hpp"
#include "util/ordered_parallel.hpp"

namespace gpuscope::load {
namespace {

using analyze::Analyzer;
using analyze::DeviceSeries;
using analyze::RunMeta;

// A worker thread's own connection (SQLite connections are not shared between threads), kept
// open while its jobs stay in the same file.
class WorkerReader {
 public:
  const store::RunReader& of(const Source& source) {
    if (!reader_ || reader_->path() != source.path) {
      transaction_.reset();
      reader_ = std::make_unique<store::RunReader>(store::RunReader::open(source.path));
      transaction_.emplace(*reader_);
    }
    return *reader_;
  }

 private:
  std::unique_ptr<store::RunReader> reader_;
  // One read transaction while the file is read (declared after the reader: ends first).
  std::optional<store::RunReader::ReadTransaction> transaction_;
};

// Reading and the per-GPU analysis run on two worker threads, which keep both cores of a small
// machine busy; this thread only merges their results in order.
unsigned reader_threads() {
  return std::clamp(std::thread::hardware_concurrency(), 1U, 2U);
}

// One GPU's samples as read for a pass: its run, the connection to read more of it from, and
// the columns read.
struct DeviceSamples {
  const Source* source = nullptr;
  unsigned device = 0;
  const store::RunReader* reader = nullptr;
  store::SampleColumns* columns = nullptr;
  unsigned worker = 0;  // the thread's number, for state kept per thread
};

// Reads every GPU's `columns` and hands each GPU's samples to `work` (which fills a Result),
// then each Result to `merge` in GPU order. With `jobs`, on the worker threads, each with its
// own connection and buffer; without, with one cursor over each run on this thread, a GPU being
// a stretch of rows with one device index.
template <typename Result, typename Work, typename Merge>
void for_each_device(const std::vector<Source>& sources,
                     const std::optional<std::vector<DeviceJob>>& jobs,
                     std::span<const Metric> columns, Work work, Merge merge) {
  if (jobs) {
    std::vector<WorkerReader> readers(reader_threads());
    std::vector<store::SampleColumns> buffers(reader_threads());
    util::ordered_parallel<Result>(
        jobs->size(), reader_threads(), 2 * reader_threads(),
        [&](std::size_t j, unsigned worker, Result& out) {
          const DeviceJob& job = (*jobs)[j];
          const store::RunReader& reader = readers[worker].of(*job.source);
          reader.read_samples(job.plan, columns, buffers[worker]);
          work(DeviceSamples{job.source, job.device, &reader, &buffers[worker], worker}, out);
        },
        merge);
    return;
  }
  store::SampleColumns c;
  for (const auto& source : sources) {
    const store::RunReader::ReadTransaction transaction(source.reader());
    auto cursor = source.reader().samples({source.run_id, std::nullopt}, columns);
    store::RunSample sample;
    std::optional<unsigned> device;
    auto flush = [&] {
      if (device && c.rows() > 0) {
        for (auto& v : c.values) {  // as read_samples: a column of NULLs only is left empty
          if (std::all_of(v.begin(), v.end(), [](double x) { return std::isnan(x); })) v.clear();
        }
        Result result;
        work(DeviceSamples{&source, *device, &source.reader(), &c, 0}, result);
        merge(result);
      }
      c.clear();
    };
    while (cursor.next(sample)) {
      if (device != sample.row.device_index) {
        flush();
        device = sample.row.device_index;
      }
      c.wall_ns.push_back(sample.row.wall_ns);
      c.mono_ns.push_back(sample.row.mono_ns);
      for (const Metric m : columns) {
        c.values[static_cast<std::size_t>(m)].push_back(sample.row.get(m).value_or(kNaN));
      }
    }
    flush();
  }
}

struct ActivitySeries {
  std::vector<double> t, activity;
  const Source* source = nullptr;
  TimeCheck check;
  std::optional<std::vector<Phase>> phases;  // read with the source's first GPU
};

// Whether `device` is the first GPU of its source that pass 1 reads (where the jobs are
// planned; read sequentially, a run's GPUs come in row order and none may be first).
bool first_planned(const Source& source, unsigned device) {
  for (const auto& [index, plan] : source.plans) {
    if (plan.rows > 0) return index == device;
  }
  return false;
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

}  // namespace

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

std::vector<TimeCheck> feed_activity(Analyzer& analyzer, const AnalysisSources& in,
                                     const std::optional<std::vector<DeviceJob>>& jobs,
                                     SourcePhases* phases) {
  if (phases != nullptr) phases->assign(in.sources.size(), std::nullopt);
  const Metric columns[] = {Metric::SmActivePct, Metric::GpuUtilPct};
  const std::int64_t t0 = analyzer.t0_wall_ns();
  std::vector<TimeCheck> checks(in.sources.size());
  for_each_device<ActivitySeries>(
      in.sources, jobs, columns,
      [&](const DeviceSamples& d, ActivitySeries& out) {
        const store::SampleColumns& c = *d.columns;
        const auto& sm = c.values[static_cast<std::size_t>(Metric::SmActivePct)];
        const auto& util = c.values[static_cast<std::size_t>(Metric::GpuUtilPct)];
        const std::size_t n = c.rows();
        out.source = d.source;
        out.check = place_samples(d.source->clock, c.wall_ns, c.mono_ns, t0, out.t);
        out.activity.resize(n);
        for (std::size_t i = 0; i < n; ++i) {  // a column is empty when the GPU lacks the metric
          out.activity[i] = analyze::sample_activity(i < sm.size() ? sm[i] : kNaN,
                                                     i < util.size() ? util[i] : kNaN);
        }
        out.phases.reset();
        if (phases != nullptr && first_planned(*d.source, d.device)) {
          out.phases.emplace();
          d.reader->for_each_phase(d.source->run_id,
                                   [&](Phase&& phase) { out.phases->push_back(std::move(phase)); });
        }
      },
      [&](ActivitySeries& series) {
        if (series.phases) (*phases)[series.source->index] = std::move(series.phases);
        checks[series.source->index].merge(series.check);
        if (!series.t.empty()) analyzer.add_activity(series.t, series.activity);
      });
  return checks;
}

namespace {

// A GPU's analysis, with its run's extras where it was the run's first GPU.
struct DeviceResult {
  analyze::PreparedDevice device;
  const Source* source = nullptr;
  std::optional<RunExtras> extras;
};

}  // namespace

void feed_devices(const Analyzer& analyzer, const AnalysisSources& in,
                  const std::optional<std::vector<DeviceJob>>& jobs,
                  const std::function<void(analyze::PreparedDevice&&)>& sink,
                  SourceExtras* extras) {
  const std::int64_t t0 = analyzer.t0_wall_ns();
  std::vector<Metric> all;
  for (std::size_t m = 0; m < kMetricCount; ++m) all.push_back(static_cast<Metric>(m));
  std::vector<DeviceSeries> series(reader_threads());
  if (extras != nullptr) extras->assign(in.sources.size(), std::nullopt);
  for_each_device<DeviceResult>(
      in.sources, jobs, all,
      [&](const DeviceSamples& s, DeviceResult& out) {
        DeviceSeries& d = series[s.worker];
        store::SampleColumns& c = *s.columns;
        d.clear();
        place_samples(s.source->clock, c.wall_ns, c.mono_ns, t0, d.t_s);
        for (std::size_t m = 0; m < kMetricCount; ++m) d.values[m].swap(c.values[m]);
        drop_unplaced(d.t_s, d.values);
        const RunMeta& meta = in.metas[s.source->meta];
        d.key = key_of(*s.source, meta, s.device);
        d.sampling_interval_s = meta.sampling_interval_s;
        feed_power(*s.reader, *s.source, s.device, d);
        analyze::derive_metrics(d);
        out.device = analyzer.prepare_device(d);
        out.source = s.source;
        out.extras.reset();
        if (extras != nullptr && first_planned(*s.source, s.device)) {
          out.extras = read_extras(*s.reader, in, *s.source);
        }
        // The columns go back to the read buffer, so one set of them per thread is ever held.
        for (std::size_t m = 0; m < kMetricCount; ++m) d.values[m].swap(c.values[m]);
      },
      [&](DeviceResult& result) {
        if (result.extras) (*extras)[result.source->index] = std::move(result.extras);
        sink(std::move(result.device));
      });
}

// The runs' phases (schema 1.5) on the analysis' time axis: names shared across runs, a track
// per source, run, process and thread (phases nest only within one).
void feed_phases(Analyzer& analyzer, const std::vector<Source>& sources, SourcePhases* read) {
  std::vector<std::string> names;
  std::unordered_map<std::string, std::uint32_t> name_ids;
  std::vector<analyze::PhaseSpan> spans;
  std::map<std::tuple<std::size_t, int, std::int64_t, std::int64_t>, std::uint64_t> tracks;
  for (const auto& source : sources) {
    auto take = [&](Phase&& phase) {
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
    };
    if (read != nullptr && source.index < read->size() && (*read)[source.index]) {
      for (Phase& phase : *(*read)[source.index]) take(std::move(phase));
      (*read)[source.index].reset();
      continue;
    }
    const store::RunReader::ReadTransaction transaction(source.reader());
    source.reader().for_each_phase(source.run_id, take);
  }
  analyzer.set_phases(std::move(names), std::move(spans));
}

}  // namespace gpuscope::load
