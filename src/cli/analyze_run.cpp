#include "cli/analyze_run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <regex>

#include "analyze/analyzer.hpp"
#include "analyze/carbon.hpp"
#include "core/error.hpp"
#include "report/analysis_view.hpp"
#include "store/run_reader.hpp"

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
  return files;
}

// A run of one input file, with its place on the analysis' run list.
struct Source {
  std::shared_ptr<store::RunReader> reader;
  std::int64_t run_id = 0;  // in its file
  std::size_t meta = 0;     // index into the analyzer's runs
  std::vector<DeviceDescription> devices;
};

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

// Pass 1: each GPU's activity, from two columns.
void feed_activity(Analyzer& analyzer, const std::vector<Source>& sources) {
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

void feed_power(const Source& source, unsigned device, std::int64_t t0, DeviceSeries& series) {
  auto cursor = source.reader->power_samples({source.run_id, device});
  store::RunPowerSample p;
  while (cursor.next(p)) {
    if (!p.row.power_w) continue;
    series.power_t_s.push_back(seconds_since(p.row.wall_ns, t0));
    series.power_w.push_back(*p.row.power_w);
  }
}

// Pass 2: each GPU's every metric, one GPU in memory at a time.
void feed_devices(Analyzer& analyzer, const std::vector<Source>& sources,
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
        feed_power(source, *device, analyzer.t0_wall_ns(), series);
        analyzer.add_device(series);
      }
      series.clear();
    };
    while (cursor.next(sample)) {
      const SampleRow& row = sample.row;
      if (device != row.device_index) {
        flush();
        device = row.device_index;
      }
      series.t_s.push_back(seconds_since(row.wall_ns, analyzer.t0_wall_ns()));
      for (std::size_t m = 0; m < kMetricCount; ++m) {
        series.values[m].push_back(row.present.test(m) ? row.values[m] : kNaN);
      }
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
  std::regex regex;
  try {
    regex = std::regex(pattern);
  } catch (const std::regex_error& e) {
    throw Error::usage(fmt::format("--work-regex '{}' is not a valid regular expression", pattern),
                       e.what(), "use ECMAScript syntax with one group, e.g. 'step ([0-9]+) done'");
  }
  if (regex.mark_count() < 1) {
    throw Error::usage(fmt::format("--work-regex '{}' has no group", pattern), {},
                       "put the amount in parentheses, e.g. 'processed ([0-9.]+) tokens'");
  }
  double total = 0;
  std::size_t lines = 0, matches = 0;
  for (const auto& source : sources) {
    auto cursor = source.reader->output({source.run_id, std::nullopt});
    store::RunOutputLine line;
    std::smatch match;
    while (cursor.next(line)) {
      ++lines;
      if (!std::regex_search(line.line.text, match, regex)) continue;
      try {
        total += std::stod(match[1].str());
        ++matches;
      } catch (const std::exception&) {
        // A match whose group is not a number is not work; it is counted out below.
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
  std::int64_t samples = 0;
  for (const auto& path : expand_inputs(o.inputs)) {
    auto reader = std::make_shared<store::RunReader>(store::RunReader::open(path));
    input_names.push_back(path.string());
    for (const auto& run : reader->runs()) {
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
      samples += reader->count_samples({run.run_id, std::nullopt});
      sources.push_back({reader, run.run_id, metas.size(), reader->devices(run.run_id)});
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
  feed_activity(analyzer, sources);
  analyzer.finish_activity();
  feed_devices(analyzer, sources, metas);
  feed_events(analyzer, sources, metas, several);
  analyze::Analysis analysis = analyzer.finish();
  analysis.inputs = input_names;
  if (extras.marks) analysis.marks = read_marks(sources, metas, analysis.t0_wall_ns, extras);
  return analysis;
}

int run_analyze(const AnalyzeOptions& o) {
  if (o.json && o.csv) throw Error::usage("--json and --csv cannot be combined");
  const auto view = report::parse_view(o.aggregate);
  const auto metrics = report::parse_metrics(o.metrics);
  const analyze::Analysis analysis = load_analysis(o);
  if (o.json) {
    fmt::print("{}\n", report::analysis_json(analysis).dump(2));
  } else if (o.csv) {
    fmt::print("{}", report::analysis_csv(analysis, view, metrics));
  } else {
    const bool color = !o.no_color && isatty(STDOUT_FILENO) != 0;
    fmt::print("{}", report::analysis_text(analysis, view, metrics, color));
  }
  return 0;
}

}  // namespace gpuscope::cli
