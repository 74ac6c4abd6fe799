#include "ingest/logs/smi_csv_format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "core/error.hpp"
#include "core/version.hpp"
#include "ingest/import.hpp"
#include "ingest/logs/local_time.hpp"
#include "ingest/logs/log_reader.hpp"
#include "ingest/logs/log_run.hpp"
#include "ingest/logs/log_tally.hpp"
#include "ingest/logs/log_text.hpp"
#include "ingest/logs/log_ticks.hpp"
#include "ingest/logs/smi_csv_fields.hpp"
#include "util/number_text.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;
using smi::FieldRole;

// One column of the log: the field it is and the unit its header names.
struct Column {
  std::string header;  // as written, for messages
  std::string name;    // without the unit
  std::string unit;
  const smi::Field* field = nullptr;  // nullptr: not understood
  bool stored = false;                // its values are kept (the first column of its metric)
};

struct Plan {
  std::vector<Column> columns;
  std::string text;  // the header line, to know it when it repeats
  int timestamp = -1, index = -1, uuid = -1, bus = -1, host = -1;
  bool has_mask = false;              // clocks_event_reasons.active
  bool has_energy = false;            // an energy counter column
  bool limit_from_requested = false;  // power.limit stands for the limit in force
};

Plan plan_of(const std::vector<std::string_view>& cells, std::string_view text) {
  Plan plan;
  plan.text = std::string(text);
  std::set<Metric> taken;
  std::set<HealthMetric> health_taken;
  bool enforced = false;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto cell = smi::split_header_cell(cells[i]);
    Column c{std::string(cells[i]), std::string(cell.name), std::string(cell.unit),
             smi::field_named(cell.name)};
    const int at = static_cast<int>(i);
    if (c.field != nullptr) {
      switch (c.field->role) {
        case FieldRole::Timestamp:
          plan.timestamp = at;
          break;
        case FieldRole::Index:
          plan.index = at;
          break;
        case FieldRole::Uuid:
          plan.uuid = at;
          break;
        case FieldRole::BusId:
          plan.bus = at;
          break;
        case FieldRole::Hostname:
          plan.host = at;
          break;
        case FieldRole::ReasonsMask:
          plan.has_mask = true;
          break;
        case FieldRole::Metric:
          c.stored = taken.insert(c.field->metric).second;
          enforced = enforced || c.field->metric == Metric::PowerLimitW;
          plan.has_energy = plan.has_energy || c.field->metric == Metric::EnergyMj;
          break;
        case FieldRole::Health:
          c.stored = health_taken.insert(c.field->health).second;
          break;
        default:
          break;
      }
    }
    plan.columns.push_back(std::move(c));
  }
  for (const auto& c : plan.columns) {
    if (c.field != nullptr && c.field->role == FieldRole::PowerLimit && !enforced) {
      plan.limit_from_requested = true;
    }
  }
  return plan;
}

// Whether `cells` are a header: most of them nvidia-smi field names, one a timestamp or a metric.
bool is_header(const std::vector<std::string_view>& cells) {
  std::size_t known = 0;
  bool telling = false;
  for (auto cell : cells) {
    const smi::Field* f = smi::field_named(smi::split_header_cell(cell).name);
    if (f == nullptr) continue;
    ++known;
    telling = telling || f->role == FieldRole::Timestamp || f->role == FieldRole::Metric ||
              f->role == FieldRole::Health;
  }
  return telling && known * 2 > cells.size();
}

// What the log's columns leave out, into the tally said at the end.
void tally_columns(const Plan& plan, LogTally& tally) {
  for (const auto& c : plan.columns) {
    if (c.field == nullptr) {
      tally.left_out[c.name] = "columns not understood";
    } else if (c.field->role == FieldRole::NoColumn) {
      tally.left_out[c.name] = "nvidia-smi fields gpuscope has no column for";
    } else if ((c.field->role == FieldRole::Metric || c.field->role == FieldRole::Health) &&
               !c.stored) {
      tally.left_out[c.name] = "another column gives the same quantity";
    }
  }
}

// Where the log names no GPU: a host's rows held until their ticks' shape is known, then its
// counter.
struct HostTicks {
  std::vector<std::pair<std::string, std::size_t>> held;  // lines and their numbers
  std::optional<TickCounter> counter;
};

bool is_fixed_fact(const Column& c) {
  return c.field != nullptr && smi::is_fixed_fact(*c.field, c.name);
}

std::optional<double> level_scale(const Column& c) {
  if (c.field == nullptr || !c.stored) return std::nullopt;
  return smi::level_unit(*c.field);
}

class CsvLog : LogReader {
 public:
  CsvLog(const fs::path& path, const ReadOptions& options, RunTarget& target)
      : LogReader(path, options, target) {}

  void read();

 private:
  bool start();
  bool names_gpus() const { return plan_.index >= 0 || plan_.uuid >= 0 || plan_.bus >= 0; }
  std::string host_of(const std::vector<std::string_view>& cells) const;
  TickRow tick_row(const std::vector<std::string_view>& cells);
  void infer_ticks(const std::string& host, HostTicks& ticks);
  void infer_all_ticks();
  void end_session(bool same_columns);
  void handle(std::string_view line);
  void row(const std::vector<std::string_view>& cells);
  std::int64_t time_of(const std::vector<std::string_view>& cells);
  std::optional<LocalDateTime> later_time(std::string_view line) const;
  unsigned gpu_of(const std::vector<std::string_view>& cells, const std::string& host,
                  std::int64_t wall_ns);
  void fill(const std::vector<std::string_view>& cells, SampleRow& sample);
  bool fill_health(const std::vector<std::string_view>& cells, HealthRow& health);
  void describe(const std::vector<std::string_view>& cells, LogRun& run, unsigned gpu);
  LogRun& run_of(const std::string& host);
  std::int64_t tick_interval(const std::string& host) const {
    const auto it = ticks_.find(host);
    return it != ticks_.end() && it->second.counter ? it->second.counter->shape().interval_ns : 0;
  }
  void finish();

  Plan plan_;
  LaterTimes later_ = later_times([this](std::string_view line) { return later_time(line); });
  std::vector<std::string_view> cells_;
  std::map<std::string, std::unique_ptr<LogRun>> runs_;  // by host
  std::map<std::string, unsigned> gpu_keys_;             // host + uuid/bus id -> index
  std::map<std::string, HostTicks> ticks_;               // by host, where the log names no GPU
  std::size_t row_count_ = 0;
};

// Reads the header (or takes --query-gpu's fields); false for an empty file.
bool CsvLog::start() {
  std::string_view line;
  if (!next_log_line(lines_, line, target_.notes())) return false;
  line_ = lines_.number();
  split_fields(line, ',', cells_);
  if (is_header(cells_)) {
    plan_ = plan_of(cells_, line);
    return true;
  }
  if (options_.query_gpu.empty()) {
    bad("the first line is no nvidia-smi CSV header",
        "a log written with --format=csv,noheader needs the fields: give --query-gpu with the "
        "list given to nvidia-smi");
  }
  std::vector<std::string_view> query;
  split_fields(options_.query_gpu, ',', query);
  plan_ = plan_of(query, {});
  handle(std::string(line));
  return true;
}

void CsvLog::read() {
  if (!start()) {
    target_.notes().push_back(fmt::format("{} is empty; nothing read from it", path_.string()));
    return;
  }
  // A last line without its end was cut off mid-write, even where what is left would parse.
  std::string_view line;
  while (next_log_line(lines_, line, target_.notes())) handle(line);
  finish();
}

void CsvLog::handle(std::string_view line) {
  line_ = lines_.number();
  if (trim(line).empty()) return;
  split_fields(line, ',', cells_);
  if (cells_.size() != plan_.columns.size() || plan_.text == line) {
    if (is_header(cells_)) {
      if (plan_.text == line) {
        tally_.repeated_headers.push_back(lines_.number());
        end_session(true);
      } else {
        end_session(false);  // rows held so far are of the old columns
        tally_columns(plan_, tally_);
        tally_.new_headers.push_back(lines_.number());
        plan_ = plan_of(cells_, line);
      }
      return;
    }
    bad(fmt::format("{} fields where the header has {}", cells_.size(), plan_.columns.size()),
        "a line of another log, or a cut-off line: fix or remove it");
  }
  if (!names_gpus()) {
    const std::string host = host_of(cells_);
    auto& ticks = ticks_[host];
    if (!ticks.counter) {
      ticks.held.emplace_back(std::string(line), lines_.number());
      if (ticks.held.size() >= 4096) infer_ticks(host, ticks);
      return;
    }
  }
  row(cells_);
}

std::string CsvLog::host_of(const std::vector<std::string_view>& cells) const {
  return plan_.host >= 0 ? std::string(cells[static_cast<std::size_t>(plan_.host)]) : std::string();
}

// What tick inference and the tick counter see of a row.
TickRow CsvLog::tick_row(const std::vector<std::string_view>& cells) {
  TickRow r;
  r.wall_ns = time_of(cells);
  r.line = line_;
  std::optional<smi::Absent> absent;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Column& c = plan_.columns[i];
    if (is_fixed_fact(c)) {
      r.facts.emplace_back(smi::absent_value(cells[i]) ? std::string_view() : trim(cells[i]));
    } else if (const auto scale = level_scale(c)) {
      const auto v = smi::metric_value(*c.field, cells[i], c.unit, absent);
      r.levels.push_back(v ? *v / *scale : std::nan(""));
      r.level_names.push_back(c.name);
    }
  }
  return r;
}

// A logger session ends (a header, repeated or new): each host's ticks so far are checked, and
// the next row starts a tick. The GPUs' facts stay known when the columns do.
void CsvLog::end_session(bool same_columns) {
  infer_all_ticks();
  for (auto& [host, ticks] : ticks_) {
    if (!ticks.counter) continue;
    std::string why;
    if (!ticks.counter->finish(why)) bad(why, "log with an index or uuid column");
    ticks.counter->restart(same_columns);
  }
}

// Decides a host's ticks' shape from its rows held, then reads them.
void CsvLog::infer_ticks(const std::string& host, HostTicks& ticks) {
  if (ticks.held.empty() || ticks.counter) return;
  std::vector<TickRow> rows;
  std::vector<std::string_view> cells;
  const LocalZone zone = zone_;  // the rows are read again below, in the same order
  for (const auto& [text, number] : ticks.held) {
    line_ = number;
    split_fields(text, ',', cells);
    rows.push_back(tick_row(cells));
  }
  zone_ = zone;
  std::string why;
  const auto shape = tick_shape(rows, options_.gpus, why);
  const std::string who =
      host.empty() ? path_.string() : fmt::format("{} ({})", path_.string(), host);
  if (!shape) {
    throw Error::usage(
        fmt::format("{}: the log has no GPU column and {}", who, why), {},
        "give --log-gpus N (the GPUs nvidia-smi listed each tick), or log with index or uuid");
  }
  target_.notes().push_back(
      fmt::format("{}: no GPU column; {} read from the ticks ({}; ticks {} apart){}", who,
                  shape->gpus == 1 ? std::string("one GPU") : fmt::format("{} GPUs", shape->gpus),
                  shape->evidence, interval_text(shape->interval_ns),
                  options_.gpus ? "" : "; give --log-gpus N if wrong"));
  if (shape->first_position != 0) {
    target_.notes().push_back(
        fmt::format("{}: the log begins inside a tick: its first row is GPU {} of {}", who,
                    shape->first_position, shape->gpus));
  }
  ticks.counter.emplace(*shape);
  auto held = std::move(ticks.held);
  ticks.held.clear();
  for (const auto& [text, number] : held) {
    line_ = number;
    split_fields(text, ',', cells);
    row(cells);
  }
}

void CsvLog::infer_all_ticks() {
  for (auto& [host, ticks] : ticks_) infer_ticks(host, ticks);
}

std::int64_t CsvLog::time_of(const std::vector<std::string_view>& cells) {
  if (plan_.timestamp < 0) {
    bad("the log has no timestamp column: its samples have no time",
        "log with --query-gpu=timestamp,... (gpuscope does not invent the times)");
  }
  const auto text = cells[static_cast<std::size_t>(plan_.timestamp)];
  const auto parts = smi::parse_timestamp(text);
  if (!parts) bad(fmt::format("'{}' is no timestamp as nvidia-smi prints it", text));
  const auto ns = utc_ns_of(
      {parts->year, parts->month, parts->day, parts->hour, parts->minute, parts->second_ns},
      later_);
  if (!ns) bad(fmt::format("'{}' is no date", text));
  return *ns;
}

// The local time of a later line of the same columns, for LocalZone's look ahead.
std::optional<LocalDateTime> CsvLog::later_time(std::string_view line) const {
  std::vector<std::string_view> cells;
  split_fields(line, ',', cells);
  if (plan_.timestamp < 0 || cells.size() != plan_.columns.size()) return std::nullopt;
  const auto parts = smi::parse_timestamp(cells[static_cast<std::size_t>(plan_.timestamp)]);
  if (!parts) return std::nullopt;
  return LocalDateTime{parts->year, parts->month,  parts->day,
                       parts->hour, parts->minute, parts->second_ns};
}

unsigned CsvLog::gpu_of(const std::vector<std::string_view>& cells, const std::string& host,
                        std::int64_t wall_ns) {
  if (plan_.index >= 0) {
    const auto text = cells[static_cast<std::size_t>(plan_.index)];
    const auto index = util::parse_unsigned(text);
    if (!index || *index > 1023) bad(fmt::format("'{}' is no GPU index", text));
    return static_cast<unsigned>(*index);
  }
  const int key_column = plan_.uuid >= 0 ? plan_.uuid : plan_.bus;
  if (key_column >= 0) {
    std::string key = host;
    key += '/';
    key += cells[static_cast<std::size_t>(key_column)];
    const auto found = gpu_keys_.find(key);
    if (found != gpu_keys_.end()) return found->second;
    unsigned next = 0;
    for (const auto& [k, v] : gpu_keys_) next += k.rfind(host + "/", 0) == 0 ? 1U : 0U;
    return gpu_keys_.emplace(std::move(key), next).first->second;
  }
  (void)wall_ns;
  std::string why;
  const auto position = ticks_.at(host).counter->next(tick_row(cells), line_, why);
  if (!position) bad(why, "log with an index or uuid column");
  return *position;
}

void CsvLog::row(const std::vector<std::string_view>& cells) {
  const std::string host = host_of(cells);
  SampleRow sample;
  sample.wall_ns = time_of(cells);
  sample.device_index = gpu_of(cells, host, sample.wall_ns);
  fill(cells, sample);
  LogRun& run = run_of(host);
  describe(cells, run, sample.device_index);
  run.push(sample, static_cast<std::int64_t>(line_now()));
  HealthRow health;
  health.wall_ns = sample.wall_ns;
  health.device_index = sample.device_index;
  if (fill_health(cells, health)) run.push(health);
  ++row_count_;
}

// The line's health values; whether it has any (a line whose health fields are all [N/A] makes
// no health row).
bool CsvLog::fill_health(const std::vector<std::string_view>& cells, HealthRow& health) {
  std::optional<smi::Absent> absent;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Column& c = plan_.columns[i];
    if (c.field == nullptr || c.field->role != FieldRole::Health || !c.stored) continue;
    if (const auto value = smi::health_value(*c.field, cells[i], c.unit, absent)) {
      health.set(c.field->health, *value);
    } else if (absent) {
      ++tally_.absent[c.name][std::string(absent->why)];
    } else {
      bad(fmt::format("'{}' is no value of {}", cells[i], c.header));
    }
  }
  return health.present.any();
}

void CsvLog::fill(const std::vector<std::string_view>& cells, SampleRow& sample) {
  std::uint64_t bits = 0;
  bool any_bit = false;
  std::optional<smi::Absent> absent;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Column& c = plan_.columns[i];
    if (c.field == nullptr) continue;
    const FieldRole role = c.field->role;
    if (role == FieldRole::Metric && c.stored) {
      const auto value = smi::metric_value(*c.field, cells[i], c.unit, absent);
      if (value) {
        sample.set(c.field->metric, *value);
      } else if (absent) {
        ++tally_.absent[c.name][std::string(absent->why)];
      } else {
        bad(fmt::format("'{}' is no value of {}", cells[i], c.header));
      }
    } else if (role == FieldRole::ReasonsMask) {
      if (const auto mask = smi::hex_mask(cells[i])) {
        sample.set(Metric::ClockEventReasons, static_cast<double>(*mask));
      } else if (!smi::absent_value(cells[i])) {
        bad(fmt::format("'{}' is no bitmask ({})", cells[i], c.header));
      }
    } else if (role == FieldRole::ReasonBit && !plan_.has_mask) {
      if (const auto active = smi::reason_active(cells[i])) {
        any_bit = true;
        bits |= *active ? c.field->bit : 0;
      }
    } else if (role == FieldRole::PowerLimit && plan_.limit_from_requested) {
      if (const auto value = smi::metric_value(*c.field, cells[i], c.unit, absent)) {
        sample.set(Metric::PowerLimitW, *value);
      }
    }
  }
  if (any_bit) sample.set(Metric::ClockEventReasons, static_cast<double>(bits));
}

// The GPU's facts from its first row that has them.
void CsvLog::describe(const std::vector<std::string_view>& cells, LogRun& run, unsigned gpu) {
  if (run.has_device(gpu) && run.device(gpu).name) return;
  DeviceDescription& d = run.device(gpu);
  std::optional<smi::Absent> absent;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Column& c = plan_.columns[i];
    if (c.field == nullptr || smi::absent_value(cells[i])) continue;
    const std::string text(cells[i]);
    const auto number = [&] { return smi::metric_value(*c.field, cells[i], c.unit, absent); };
    switch (c.field->role) {
      case FieldRole::Name:
        d.name = text;
        break;
      case FieldRole::Uuid:
        d.uuid = text;
        break;
      case FieldRole::BusId:
        d.pci_bus_id = text;
        break;
      case FieldRole::MemoryTotal:
        if (auto v = number()) d.memory_total_bytes = static_cast<std::uint64_t>(*v);
        break;
      case FieldRole::PowerLimit:
        d.power_limit_w = number();
        break;
      case FieldRole::DefaultPowerLimit:
        d.default_power_limit_w = number();
        break;
      case FieldRole::MinPowerLimit:
        d.min_power_limit_w = number();
        break;
      case FieldRole::MaxPowerLimit:
        d.max_power_limit_w = number();
        break;
      case FieldRole::MaxSmClock:
        if (auto v = number()) d.max_sm_clock_mhz = static_cast<unsigned>(*v);
        break;
      case FieldRole::MaxMemoryClock:
        if (auto v = number()) d.max_memory_clock_mhz = static_cast<unsigned>(*v);
        break;
      case FieldRole::MaxGraphicsClock:
        if (auto v = number()) d.max_graphics_clock_mhz = static_cast<unsigned>(*v);
        break;
      case FieldRole::DriverVersion:
        run.info().driver_version = text;
        break;
      default:
        break;
    }
  }
  if (!d.name) d.name = "";  // described once, even when the log names no product
}

LogRun& CsvLog::run_of(const std::string& host) {
  auto& run = runs_[host];
  if (run) return *run;
  RunInfo info;
  info.label = path_.filename().string();
  info.host = host;
  info.tool_version = fmt::format("nvidia-smi (imported by gpuscope {})", kVersion);
  info.origin = fmt::format("nvidia-smi --query-gpu log {}, local times read in {}", path_.string(),
                            zone_.description());
  const std::int64_t interval = options_.interval_s
                                    ? static_cast<std::int64_t>(*options_.interval_s * 1e9)
                                    : tick_interval(host);
  run = std::make_unique<LogRun>(target_, std::move(info), interval);
  return *run;
}

void CsvLog::finish() {
  end_session(true);
  for (const auto& [host, ticks] : ticks_) {
    if (ticks.counter && ticks.counter->jittered_ticks() > 0) {
      target_.notes().push_back(fmt::format(
          "{}: {} tick{} whose rows were spread wider than the gaps around them (a loaded "
          "machine's jitter), read in their order",
          path_.string(), ticks.counter->jittered_ticks(),
          ticks.counter->jittered_ticks() == 1 ? "" : "s"));
    }
  }
  tally_columns(plan_, tally_);
  tally_.say(path_, "logs appended to one file", target_.notes());
  target_.notes().push_back(
      fmt::format("{}: local times read in {}", path_.string(), zone_.description()));
  if (plan_.limit_from_requested) {
    target_.notes().push_back(fmt::format(
        "{}: no enforced.power.limit; power.limit (the requested limit) taken as the limit in "
        "force",
        path_.string()));
  }
  std::vector<std::string> problems = {kSmiCsvNotRecorded};
  if (!plan_.has_energy) {
    problems.push_back(
        "no energy counter in the log: energy is its power integrated between samples "
        "(power.draw is a 1 s average on Ampere and newer but A100; docs/logs.md)");
  }
  std::size_t written = 0;
  for (auto& [host, run] : runs_) written += run->finish(problems) ? 1U : 0U;
  if (written == 0) {
    say_no_samples();
  }
}

}  // namespace

std::string_view SmiCsvFormat::inputs() const {
  return "nvidia-smi --query-gpu logs (--format=csv, with or without nounits; noheader with "
         "--query-gpu)";
}

bool SmiCsvFormat::recognises(const fs::path& path, const ReadOptions& options) const {
  if (!is_foreign_text(path)) return false;
  const std::string head = read_head(path, 64 * 1024);
  const std::string_view line = first_line(head);
  if (line.empty()) return false;
  std::vector<std::string_view> cells;
  split_fields(line, ',', cells);
  if (is_header(cells)) return true;
  if (options.query_gpu.empty()) return false;
  std::vector<std::string_view> query;
  split_fields(options.query_gpu, ',', query);
  return query.size() == cells.size() && is_header(query);
}

void SmiCsvFormat::read(const std::vector<fs::path>& inputs, const ReadOptions& options,
                        RunTarget& target) const {
  read_each_log<CsvLog>(inputs, options, target);
}

}  // namespace gpuscope::ingest
