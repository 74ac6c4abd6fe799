#include "trace/perfetto_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/phase.hpp"
#include "kernels/summary.hpp"
#include "store/kernel_tables.hpp"
#include "store/run_reader.hpp"

namespace gpuscope::trace {
namespace {

namespace fs = std::filesystem;

// A JSON string literal (invalid UTF-8 replaced by U+FFFD, as everywhere: core/json_text.hpp).
std::string json_string(const std::string& text) {
  return json_text(nlohmann::json(text));
}

// Nanoseconds as microseconds with three decimals, exactly ("-1.500", "12345.678").
std::string micros(std::int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  const std::uint64_t a =
      ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  return fmt::format("{}{}.{:03}", sign, a / 1000, a % 1000);
}

class EventWriter {
 public:
  EventWriter(std::ostream& out, PerfettoSummary& summary) : out_(out), summary_(summary) {}

  void begin(const nlohmann::json& other_data) {
    out_ << "{\"displayTimeUnit\":\"ms\",\"otherData\":" << json_text(other_data)
         << ",\"traceEvents\":[\n";
  }
  void end() { out_ << "\n]}\n"; }

  void metadata(const char* name, std::int64_t pid, std::int64_t tid, const std::string& args) {
    next();
    out_ << "{\"name\":\"" << name << "\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
         << ",\"args\":" << args << '}';
    ++summary_.metadata;
  }
  void counter(const std::string& name_json, std::int64_t pid, std::int64_t ts_ns,
               const std::string& key_json, double value) {
    next();
    out_ << "{\"name\":" << name_json << ",\"ph\":\"C\",\"ts\":" << micros(ts_ns)
         << ",\"pid\":" << pid << ",\"tid\":0,\"args\":{" << key_json << ':' << json_number(value)
         << "}}";  // a stored inf or NaN is null, never "inf"
    ++summary_.counters;
  }
  void slice(const std::string& name_json, const char* category, std::int64_t pid, std::int64_t tid,
             std::int64_t ts_ns, std::int64_t dur_ns, const std::string& args) {
    next();
    out_ << "{\"name\":" << name_json << ",\"cat\":\"" << category
         << "\",\"ph\":\"X\",\"ts\":" << micros(ts_ns)
         << ",\"dur\":" << micros(std::max<std::int64_t>(0, dur_ns)) << ",\"pid\":" << pid
         << ",\"tid\":" << tid << ",\"args\":" << args << '}';
    ++summary_.slices;
  }
  void count_phase() { ++summary_.phases; }
  void instant(const std::string& name, std::int64_t pid, std::int64_t ts_ns,
               const std::string& args) {
    next();
    out_ << "{\"name\":" << json_string(name)
         << ",\"cat\":\"event\",\"ph\":\"i\",\"s\":\"p\",\"ts\":" << micros(ts_ns)
         << ",\"pid\":" << pid << ",\"tid\":0,\"args\":" << args << '}';
    ++summary_.instants;
  }

 private:
  void next() {
    if (!first_) out_ << ",\n";
    first_ = false;
  }
  std::ostream& out_;
  PerfettoSummary& summary_;
  bool first_ = true;
};

struct Input {
  fs::path file;
  store::RunReader reader;
  std::vector<store::StoredRun> runs;
};

std::string process_name(const store::StoredRun& run, bool several_files, const fs::path& file) {
  std::string name = run.info.host.empty() ? "run" : run.info.host;
  if (run.info.ranks.rank) name += fmt::format(" rank {}", *run.info.ranks.rank);
  if (!run.info.label.empty()) name += " · " + run.info.label;
  if (several_files) name += " (" + file.filename().string() + ")";
  return name;
}

class RunExporter {
 public:
  RunExporter(EventWriter& w, const PerfettoOptions& o, std::int64_t t0) : w_(w), o_(o), t0_(t0) {}

  void run(const Input& input, const store::StoredRun& run, std::int64_t pid, bool several) {
    const std::int64_t offset = run.info.start_wall_ns - run.info.start_mono_ns;
    w_.metadata(
        "process_name", pid, 0,
        fmt::format("{{\"name\":{}}}", json_string(process_name(run, several, input.file))));
    w_.metadata("process_sort_index", pid, 0, fmt::format("{{\"sort_index\":{}}}", pid));
    w_.metadata("thread_name", pid, 0, "{\"name\":\"events\"}");
    devices_.clear();
    for (const DeviceDescription& d : input.reader.devices(run.run_id)) {
      devices_[d.index] = fmt::format("GPU {}", d.index);
    }
    counters(input, run, pid);
    events(input, run, pid);
    if (o_.kernels) kernels(input, run, pid, offset);
    phases(input, run, pid, offset);
  }

 private:
  std::string gpu_label(unsigned index) const {
    const auto it = devices_.find(index);
    return it != devices_.end() ? it->second : fmt::format("GPU {}", index);
  }

  // Counter track names and argument keys, made once per (GPU, metric).
  const std::pair<std::string, std::string>& track(unsigned device, Metric m, bool fast) {
    auto [it, added] = tracks_.try_emplace({device, m, fast});
    if (added) {
      const MetricInfo& mi = info(m);
      it->second = {
          json_string(fmt::format("{} {}{}", gpu_label(device), mi.name, fast ? " (fast)" : "")),
          json_string(mi.unit.empty() ? std::string("value") : std::string(mi.unit))};
    }
    return it->second;
  }

  void counters(const Input& input, const store::StoredRun& run, std::int64_t pid) {
    std::vector<Metric> metrics = o_.metrics;
    if (metrics.empty()) {
      for (const auto& m : kMetrics) metrics.push_back(m.id);
    }
    tracks_.clear();
    auto cursor = input.reader.samples({run.run_id, std::nullopt}, metrics);
    store::RunSample s;
    while (cursor.next(s)) {
      for (Metric m : metrics) {
        const auto value = s.row.get(m);
        if (!value) continue;  // a metric without data makes no track
        const auto& [name, key] = track(s.row.device_index, m, false);
        w_.counter(name, pid, s.row.wall_ns - t0_, key, *value);
      }
    }
    if (!o_.power_samples) return;
    auto power = input.reader.power_samples({run.run_id, std::nullopt});
    store::RunPowerSample p;
    while (power.next(p)) {
      const std::pair<Metric, std::optional<double>> values[] = {
          {Metric::PowerW, p.row.power_w},
          {Metric::PowerInstantW, p.row.power_instant_w},
          {Metric::EnergyMj, p.row.energy_mj}};
      for (const auto& [m, value] : values) {
        if (!value || std::find(metrics.begin(), metrics.end(), m) == metrics.end()) continue;
        const auto& [name, key] = track(p.row.device_index, m, true);
        w_.counter(name, pid, p.row.wall_ns - t0_, key, *value);
      }
    }
  }

  void events(const Input& input, const store::StoredRun& run, std::int64_t pid) {
    auto cursor = input.reader.events({run.run_id, std::nullopt});
    store::RunEvent e;
    while (cursor.next(e)) {
      nlohmann::json args = {{"detail", e.event.detail}};
      if (e.event.device_index) args["gpu"] = *e.event.device_index;
      w_.instant(std::string(e.event.kind.text()), pid, e.event.wall_ns - t0_, json_text(args));
    }
  }

  // A thread per (GPU, process, stream, kind), numbered in the order met.
  std::int64_t thread(std::int64_t pid, const TracePlace& p, bool memory) {
    const auto key = std::make_tuple(p.device_index, p.process, p.stream_id, memory);
    auto [it, added] = threads_.try_emplace(key, next_tid_);
    if (added) {
      ++next_tid_;
      const std::string gpu = p.device_index
                                  ? gpu_label(*p.device_index)
                                  : fmt::format("CUDA device {} (not sampled)", p.cuda_device);
      std::string name = fmt::format("{} stream {}", gpu, p.stream_id);
      if (memory) name += " memcpy/memset";
      if (pids_.size() > 1) {
        const auto pid_of = pids_.find(p.process);
        name += pid_of != pids_.end() ? fmt::format(" (pid {})", pid_of->second)
                                      : fmt::format(" (process {})", p.process);
      }
      w_.metadata("thread_name", pid, it->second,
                  fmt::format("{{\"name\":{}}}", json_string(name)));
      // GPUs in index order, each GPU's streams together, unsampled GPUs last.
      const std::int64_t gpu_order = p.device_index ? std::int64_t{*p.device_index} : 100000;
      w_.metadata("thread_sort_index", pid, it->second,
                  fmt::format("{{\"sort_index\":{}}}", gpu_order * 100000 + it->second));
    }
    return it->second;
  }

  void kernels(const Input& input, const store::StoredRun& run, std::int64_t pid,
               std::int64_t /*offset*/) {
    const store::KernelTraceReader trace = store::KernelTraceReader::open(input.file);
    if (!trace.has_trace_tables()) return;
    threads_.clear();
    next_tid_ = 1;
    pids_.clear();
    for (const TraceProcess& process : trace.processes(run.run_id)) {
      pids_[process.process] = process.pid;
    }
    std::map<std::int64_t, std::pair<std::string, std::string>> names;  // id → (short, full)
    for (const TraceKernelName& n : trace.names(run.run_id)) {
      names[n.name_id] = {json_string(n.short_name), n.demangled};
    }
    trace.for_each_kernel(run.run_id, store::TraceOrder::ByDeviceStream, [&](const TraceKernel& k) {
      const auto name = names.find(k.name_id);
      nlohmann::json args = {{"name", name != names.end() ? name->second.second : std::string("?")},
                             {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                             {"block", {k.block[0], k.block[1], k.block[2]}},
                             {"registers_per_thread", k.registers_per_thread},
                             {"static_shared_bytes", k.static_shared_bytes},
                             {"dynamic_shared_bytes", k.dynamic_shared_bytes},
                             {"stream", k.place.stream_id},
                             {"context", k.place.context_id},
                             {"correlation_id", k.place.correlation_id},
                             {"cuda_device", k.place.cuda_device}};
      w_.slice(name != names.end() ? name->second.first : json_string("?"), "kernel", pid,
               thread(pid, k.place, false), k.times.start_wall_ns - t0_, k.times.duration_ns(),
               json_text(args));
    });
    trace.for_each_memory_op(
        run.run_id, store::TraceOrder::ByDeviceStream, [&](const TraceMemoryOp& m) {
          const std::string op =
              m.memset ? "[CUDA memset]" : kernels::memcpy_operation(m.copy_kind);
          nlohmann::json args = {{"bytes", m.bytes},
                                 {"stream", m.place.stream_id},
                                 {"correlation_id", m.place.correlation_id}};
          w_.slice(json_string(op), m.memset ? "memset" : "memcpy", pid, thread(pid, m.place, true),
                   m.times.start_wall_ns - t0_, m.times.duration_ns(), json_text(args));
        });
  }

  // The run's phases (docs/phases.md) as slices, a track per source, process and thread, above the
  // kernel tracks; points as zero-length slices.
  void phases(const Input& input, const store::StoredRun& run, std::int64_t pid,
              std::int64_t offset) {
    std::map<std::tuple<int, std::int64_t, std::int64_t>, std::int64_t> tracks;
    input.reader.for_each_phase(run.run_id, [&](Phase&& p) {
      const auto key =
          std::make_tuple(static_cast<int>(p.source), p.pid.value_or(-1), p.tid.value_or(-1));
      auto [it, added] =
          tracks.try_emplace(key, kPhaseTid + static_cast<std::int64_t>(tracks.size()));
      if (added) {
        std::string name = fmt::format("phases: {}", to_text(p.source));
        if (p.pid)
          name += fmt::format(" (pid {}{})", *p.pid, p.tid ? fmt::format(", tid {}", *p.tid) : "");
        w_.metadata("thread_name", pid, it->second,
                    fmt::format("{{\"name\":{}}}", json_string(name)));
        // Phases above the kernels and memory operations (sorted by this index).
        w_.metadata("thread_sort_index", pid, it->second,
                    fmt::format("{{\"sort_index\":{}}}", -1000 + static_cast<int>(tracks.size())));
      }
      nlohmann::json args = {{"source", to_text(p.source)}, {"closed", p.closed}};
      if (!p.instance.empty()) args["instance"] = p.instance;
      if (!p.domain.empty()) args["domain"] = p.domain;
      if (p.category) args["category"] = *p.category;
      if (p.device_index) args["gpu"] = *p.device_index;
      const std::string label = p.instance.empty() ? p.name : p.name + " " + p.instance;
      w_.slice(json_string(label), p.point ? "phase point" : "phase", pid, it->second,
               p.start_mono_ns + offset - t0_, p.end_mono_ns - p.start_mono_ns, json_text(args));
      w_.count_phase();
    });
  }

  // Phase tracks' thread ids, clear of the kernel tracks' (numbered from 1).
  static constexpr std::int64_t kPhaseTid = 1'000'000;

  EventWriter& w_;
  const PerfettoOptions& o_;
  std::int64_t t0_;
  std::map<unsigned, std::string> devices_;
  std::map<std::tuple<unsigned, Metric, bool>, std::pair<std::string, std::string>> tracks_;
  std::map<std::tuple<std::optional<unsigned>, std::int64_t, std::uint32_t, bool>, std::int64_t>
      threads_;
  std::int64_t next_tid_ = 1;
  std::map<std::int64_t, std::int64_t> pids_;  // trace process → its pid
};

}  // namespace

PerfettoSummary write_perfetto_trace(const std::vector<fs::path>& inputs, std::ostream& out,
                                     const PerfettoOptions& options) {
  // Every input is opened and checked before a byte is written.
  std::vector<Input> opened;
  std::optional<std::int64_t> t0;
  for (const fs::path& file : inputs) {
    store::RunReader reader = store::RunReader::open(file);
    std::vector<store::StoredRun> runs = reader.runs();
    for (const auto& run : runs) {
      t0 = t0 ? std::min(*t0, run.info.start_wall_ns) : run.info.start_wall_ns;
    }
    opened.push_back({file, std::move(reader), std::move(runs)});
  }
  PerfettoSummary summary;
  summary.t0_wall_ns = t0.value_or(0);
  EventWriter writer(out, summary);
  nlohmann::json inputs_json = nlohmann::json::array();
  for (const fs::path& file : inputs) inputs_json.push_back(file.string());
  writer.begin({{"generator", "gpuscope export --perfetto"},
                {"t0_unix_ns", summary.t0_wall_ns},
                {"time_base", "ts = µs since t0_unix_ns (CLOCK_REALTIME of each row)"},
                {"inputs", inputs_json}});
  RunExporter exporter(writer, options, summary.t0_wall_ns);
  std::int64_t pid = 0;
  for (const Input& input : opened) {
    for (const store::StoredRun& run : input.runs) {
      exporter.run(input, run, ++pid, opened.size() > 1);
      ++summary.runs;
    }
  }
  writer.end();
  return summary;
}

}  // namespace gpuscope::trace
