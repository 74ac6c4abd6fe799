#include "ingest/logs/smi_dmon_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
#include "ingest/logs/smi_csv_fields.hpp"
#include "util/number_text.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;

constexpr double kMiB = 1024.0 * 1024.0;  // dmon's "MB" is MiB, as nvidia-smi's memory fields
constexpr std::int64_t kDayNs = 86'400'000'000'000;

enum class Role { Date, Time, Gpu, Metric, Gpm, Health, NoColumn };

// A column dmon prints: its name in the first header line and its unit in the second.
struct Known {
  std::string_view name;
  Role role;
  std::string_view unit;
  Metric metric = Metric::PowerW;
  double scale = 1;
  HealthMetric health = HealthMetric::EccEnabled;  // Health
};

// clang-format off
constexpr Known kKnown[] = {
  {"Date", Role::Date, "YYYYMMDD"},
  {"Time", Role::Time, "HH:MM:SS"},
  {"gpu", Role::Gpu, "Idx"},
  {"pwr", Role::Metric, "W", Metric::PowerW},
  {"gtemp", Role::Metric, "C", Metric::TemperatureC},
  {"temp", Role::Metric, "C", Metric::TemperatureC},  // drivers before about 525
  {"mtemp", Role::Metric, "C", Metric::MemoryTemperatureC},
  // dmon's "sm" is NVML's utilization.gpu (time a kernel ran), not the SM activity of GPM.
  {"sm", Role::Metric, "%", Metric::GpuUtilPct},
  {"mem", Role::Metric, "%", Metric::MemUtilPct},
  {"mclk", Role::Metric, "MHz", Metric::MemClockMhz},
  {"pclk", Role::Metric, "MHz", Metric::GraphicsClockMhz},  // "processor clock": graphics
  {"fb", Role::Metric, "MB", Metric::MemoryUsedBytes, kMiB},
  {"rxpci", Role::Metric, "MB/s", Metric::PcieRxBytesPerS, kMiB},
  {"txpci", Role::Metric, "MB/s", Metric::PcieTxBytesPerS, kMiB},
  // --gpm-metrics 1,2,3,4,5,10,11,12,13, in percent.
  {"gract", Role::Gpm, "GPM:%", Metric::GraphicsActivePct},
  {"smutil", Role::Gpm, "GPM:%", Metric::SmActivePct},
  {"smocc", Role::Gpm, "GPM:%", Metric::SmOccupancyPct},
  {"intutil", Role::Gpm, "GPM:%", Metric::IntegerActivePct},
  {"mmaact", Role::Gpm, "GPM:%", Metric::TensorActivePct},  // GPM 5, any tensor precision
  {"dram", Role::Gpm, "GPM:%", Metric::DramActivePct},
  {"fp64", Role::Gpm, "GPM:%", Metric::Fp64ActivePct},
  {"fp32", Role::Gpm, "GPM:%", Metric::Fp32ActivePct},
  {"fp16", Role::Gpm, "GPM:%", Metric::Fp16ActivePct},
  // Health (-s u, -s e): the video engines' utilization; the ECC error counts, aggregate over
  // the GPU's life (nvidia-smi's manual: "aggregate single/double bit ecc errors"); the PCIe
  // replay counter, a total (on the H200 it reads as nvidia-smi -q's "Replays Since Reset").
  {"enc", Role::Health, "%", Metric::PowerW, 1, HealthMetric::EncoderUtilPct},
  {"dec", Role::Health, "%", Metric::PowerW, 1, HealthMetric::DecoderUtilPct},
  {"sbecc", Role::Health, "errs", Metric::PowerW, 1, HealthMetric::EccCorrectedAggregate},
  {"dbecc", Role::Health, "errs", Metric::PowerW, 1, HealthMetric::EccUncorrectedAggregate},
  {"pci", Role::Health, "errs", Metric::PowerW, 1, HealthMetric::PcieReplays},
  // pviol is the share of the interval the clocks were held down for power, tviol whether they
  // were for temperature: neither is the violation time health_samples counts (docs/logs.md).
  {"pviol", Role::NoColumn, "%"}, {"tviol", Role::NoColumn, "bool"},
  {"jpg", Role::NoColumn, "%"}, {"ofa", Role::NoColumn, "%"}, {"bar1", Role::NoColumn, "MB"},
  {"ccpm", Role::NoColumn, "MB"},
};
// clang-format on

const Known* known_named(std::string_view name) {
  for (const Known& k : kKnown) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

// The words of a '#' header line ("#gpu, pwr, ..." or "# gpu    pwr ..."); `csv` says which.
std::vector<std::string_view> header_words(std::string_view text, bool& csv) {
  std::vector<std::string_view> words;
  text.remove_prefix(1);
  csv = text.find(',') != std::string_view::npos;
  if (csv) {
    split_fields(text, ',', words);
  } else {
    split_blanks(text, words);
  }
  return words;
}

// The first header line: "gpu" after an optional "Date" and "Time".
bool is_names(const std::vector<std::string_view>& words) {
  for (auto word : words) {
    if (word == "gpu") return true;
    if (word != "Date" && word != "Time") return false;
  }
  return false;
}

// The second: "Idx" after an optional "YYYYMMDD" and "HH:MM:SS".
bool is_units(const std::vector<std::string_view>& words) {
  for (auto word : words) {
    if (word == "Idx") return true;
    if (word != "YYYYMMDD" && word != "HH:MM:SS") return false;
  }
  return false;
}

struct Column {
  std::string name;
  const Known* known = nullptr;  // nullptr: not understood
  bool stored = false;           // its values are kept (the first column of its metric)
};

struct Plan {
  std::vector<Column> columns;
  std::string text;  // the names line, to know it when it repeats
  int date = -1, time = -1, gpu = -1;
  bool gpm = false;  // a GPM column is kept
};

Plan plan_of(const std::vector<std::string_view>& words, std::string_view text, LogTally& tally) {
  Plan plan;
  plan.text = std::string(text);
  std::set<Metric> taken;
  std::set<HealthMetric> health_taken;
  for (std::size_t i = 0; i < words.size(); ++i) {
    Column c{std::string(words[i]), known_named(words[i])};
    const int at = static_cast<int>(i);
    const Role role = c.known != nullptr ? c.known->role : Role::NoColumn;
    if (c.known == nullptr) {
      tally.left_out[c.name] = "columns not understood";
    } else if (role == Role::Date) {
      plan.date = at;
    } else if (role == Role::Time) {
      plan.time = at;
    } else if (role == Role::Gpu) {
      plan.gpu = at;
    } else if (role == Role::NoColumn) {
      tally.left_out[c.name] = "nvidia-smi dmon columns gpuscope has no column for";
    } else if (role == Role::Health) {
      c.stored = health_taken.insert(c.known->health).second;
      if (!c.stored) tally.left_out[c.name] = "another column gives the same quantity";
    } else {
      c.stored = taken.insert(c.known->metric).second;
      plan.gpm = plan.gpm || (c.stored && role == Role::Gpm);
      if (!c.stored) tally.left_out[c.name] = "another column gives the same quantity";
    }
    plan.columns.push_back(std::move(c));
  }
  return plan;
}

// Days since 1970-01-01 of a civil date, and back (proleptic Gregorian).
std::int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  return static_cast<std::int64_t>(era) * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

LocalDateTime civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<int>(z - era * 146097);
  const int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int mp = (5 * doy + 2) / 153;
  LocalDateTime t;
  t.day = doy - (153 * mp + 2) / 5 + 1;
  t.month = mp < 10 ? mp + 3 : mp - 9;
  t.year = static_cast<int>(yoe + era * 400) + (t.month <= 2 ? 1 : 0);
  return t;
}

// The local date (days since 1970-01-01) of the instant `ns` in `zone`.
std::int64_t local_day(std::int64_t ns, const LocalZone& zone) {
  const std::int64_t local_ns = ns + zone.offset_s_at(ns) * 1'000'000'000;
  return local_ns / kDayNs - (local_ns % kDayNs < 0 ? 1 : 0);
}

// "22:40:11": seconds into the day.
std::optional<std::int64_t> seconds_of_day(std::string_view text) {
  if (text.size() != 8 || text[2] != ':' || text[5] != ':') return std::nullopt;
  const auto h = util::parse_unsigned(text.substr(0, 2));
  const auto m = util::parse_unsigned(text.substr(3, 2));
  const auto s = util::parse_unsigned(text.substr(6, 2));
  if (!h || !m || !s || *h > 23 || *m > 59 || *s > 60) return std::nullopt;
  return static_cast<std::int64_t>(*h * 3600 + *m * 60 + *s);
}

// "20261125" as a date.
std::optional<LocalDateTime> date_of(std::string_view text) {
  const auto all = text.size() == 8 ? util::parse_unsigned(text) : std::nullopt;
  if (!all) return std::nullopt;
  LocalDateTime t;
  t.year = static_cast<int>(*all / 10000);
  t.month = static_cast<int>(*all / 100 % 100);
  t.day = static_cast<int>(*all % 100);
  return t;
}

// What a first pass over a log without dates learns: its ticks (one row per GPU each: a row
// whose GPU index is not above the previous row's starts one) and, for a log with times only,
// how often the time went back to the next day.
struct Scan {
  std::size_t ticks = 0;
  std::int64_t midnights = 0;
};

Scan scan(const fs::path& path) {
  Scan out;
  LogLines lines(path);
  std::string_view line;
  std::vector<std::string_view> cells;
  int gpu = -1, time = -1;
  bool csv = false;
  std::optional<unsigned long long> last_gpu;
  std::optional<std::int64_t> last_second;
  while (lines.next(line)) {
    const auto text = trim(line);
    if (text.empty() || lines.unterminated()) continue;
    if (text.front() == '#') {
      const auto words = header_words(text, csv);
      if (!is_names(words)) continue;
      gpu = time = -1;
      for (std::size_t i = 0; i < words.size(); ++i) {
        if (words[i] == "gpu") gpu = static_cast<int>(i);
        if (words[i] == "Time") time = static_cast<int>(i);
      }
      continue;
    }
    csv ? split_fields(text, ',', cells) : split_blanks(text, cells);
    if (gpu < 0 || cells.size() <= static_cast<std::size_t>(std::max(gpu, time))) continue;
    const auto index = util::parse_unsigned(cells[static_cast<std::size_t>(gpu)]);
    if (!index) continue;
    if (!last_gpu || *index <= *last_gpu) ++out.ticks;
    last_gpu = index;
    const auto second =
        time >= 0 ? seconds_of_day(cells[static_cast<std::size_t>(time)]) : std::nullopt;
    if (second && last_second && *second < *last_second - 43200) ++out.midnights;
    if (second) last_second = second;
  }
  return out;
}

class DmonLog : LogReader {
 public:
  DmonLog(const fs::path& path, const ReadOptions& options, RunTarget& target)
      : LogReader(path, options, target) {}

  void read();

 private:
  void handle(std::string_view text);
  void header(std::string_view text);
  void row(std::string_view text);
  std::int64_t time_of(const std::vector<std::string_view>& cells);
  std::int64_t stamped(std::string_view date, std::string_view time);
  std::int64_t time_only(std::string_view time);
  std::int64_t timeless();
  std::optional<LocalDateTime> later_time(std::string_view line) const;
  void fill(const std::vector<std::string_view>& cells, SampleRow& sample, HealthRow& health);
  LogRun& run();
  void finish();

  Plan plan_;
  LaterTimes later_ = later_times([this](std::string_view line) { return later_time(line); });
  bool csv_ = false;
  std::vector<std::string_view> cells_;
  std::unique_ptr<LogRun> run_;
  std::set<unsigned> gpm_gpus_;  // GPUs with GPM columns
  std::optional<Scan> scan_;
  std::optional<unsigned> last_gpu_;
  std::int64_t tick_ = -1;
  std::optional<std::int64_t> timeless_start_;
  std::optional<std::int64_t> day_;  // -o T: the current local date, days since 1970-01-01
  std::int64_t last_second_ = 0;
  bool stamped_ = false, times_only_ = false, timeless_ = false;  // what the rows had
};

void DmonLog::read() {
  std::string_view text;
  while (next_log_line(lines_, text, target_.notes())) handle(text);
  finish();
}

void DmonLog::handle(std::string_view text) {
  if (text.front() == '#') {
    header(text);
    return;
  }
  if (plan_.columns.empty()) {
    bad("a row before any header line",
        "nvidia-smi dmon --format noheader leaves out the column names: log with the header");
  }
  row(text);
}

void DmonLog::header(std::string_view text) {
  const auto words = header_words(text, csv_);
  if (is_units(words)) {
    if (plan_.columns.empty()) bad("a units line before the column names");
    if (words.size() != plan_.columns.size()) {
      bad(fmt::format("{} units where the header has {} columns", words.size(),
                      plan_.columns.size()));
    }
    for (std::size_t i = 0; i < words.size(); ++i) {
      Column& c = plan_.columns[i];
      if (c.known == nullptr || c.known->unit == words[i]) continue;
      tally_.left_out[c.name] = fmt::format("a unit ({}) gpuscope does not expect", words[i]);
      if (c.known->role == Role::Metric || c.known->role == Role::Gpm ||
          c.known->role == Role::Health) {
        c.stored = false;
      }
    }
    return;
  }
  if (!is_names(words)) bad("a '#' line that is no nvidia-smi dmon header");
  if (plan_.text == text) {
    tally_.repeated_headers.push_back(lines_.number());
    return;
  }
  if (!plan_.columns.empty()) tally_.new_headers.push_back(lines_.number());
  plan_ = plan_of(words, text, tally_);
}

void DmonLog::row(std::string_view text) {
  csv_ ? split_fields(text, ',', cells_) : split_blanks(text, cells_);
  if (cells_.size() > plan_.columns.size() ||
      cells_.size() <= static_cast<std::size_t>(plan_.gpu)) {
    bad(fmt::format("{} values where the header has {} columns", cells_.size(),
                    plan_.columns.size()),
        "a line of another log, or a damaged one: fix or remove it");
  }
  const auto index = util::parse_unsigned(cells_[static_cast<std::size_t>(plan_.gpu)]);
  if (!index || *index > 1023) {
    bad(fmt::format("'{}' is no GPU index", cells_[static_cast<std::size_t>(plan_.gpu)]));
  }
  // Every row counts as its GPU's place in a tick, the short ones too (as the first pass does).
  if (!last_gpu_ || *index <= *last_gpu_) ++tick_;
  last_gpu_ = static_cast<unsigned>(*index);
  if (cells_.size() < plan_.columns.size()) {
    // A GPU that fails partway prints a short row of '-'; anything else short is damage.
    for (std::size_t i = static_cast<std::size_t>(plan_.gpu) + 1; i < cells_.size(); ++i) {
      if (cells_[i] != "-") {
        bad(fmt::format("{} values where the header has {} columns", cells_.size(),
                        plan_.columns.size()),
            "a line of another log, or a damaged one: fix or remove it");
      }
    }
    ++tally_.skipped["short rows of '-' (a GPU nvidia-smi could not read)"];
    return;
  }
  SampleRow sample;
  sample.device_index = static_cast<unsigned>(*index);
  sample.wall_ns = time_of(cells_);
  HealthRow health;
  health.device_index = sample.device_index;
  health.wall_ns = sample.wall_ns;
  fill(cells_, sample, health);
  LogRun& log_run = run();
  DeviceDescription& d = log_run.device(sample.device_index);
  if (!d.name) d.name = "";  // dmon names no product
  if (plan_.gpm && gpm_gpus_.insert(sample.device_index).second) {
    d.saturation_source = "gpm";
    d.saturation_detail = "nvidia-smi dmon --gpm-metrics log";
  }
  log_run.push(sample, static_cast<std::int64_t>(line_now()));
  if (health.present.any()) log_run.push(health);
}

std::int64_t DmonLog::time_of(const std::vector<std::string_view>& cells) {
  const auto cell = [&](int at) { return cells[static_cast<std::size_t>(at)]; };
  if (plan_.date >= 0 && plan_.time >= 0) {
    stamped_ = true;
    return stamped(cell(plan_.date), cell(plan_.time));
  }
  if (plan_.time >= 0) {
    times_only_ = true;
    return time_only(cell(plan_.time));
  }
  timeless_ = true;
  return timeless();
}

// "20261125" and "22:40:11" as a local time; nullopt when either is not one.
std::optional<LocalDateTime> local_of(std::string_view date, std::string_view time) {
  auto t = date_of(date);
  const auto second = seconds_of_day(time);
  if (!t || !second) return std::nullopt;
  t->hour = static_cast<int>(*second / 3600);
  t->minute = static_cast<int>(*second / 60 % 60);
  t->second_ns = *second % 60 * 1'000'000'000;
  return t;
}

std::int64_t DmonLog::stamped(std::string_view date, std::string_view time) {
  const auto t = local_of(date, time);
  if (!t) bad(fmt::format("'{} {}' is no date and time as dmon prints them", date, time));
  const auto ns = utc_ns_of(*t, later_);
  if (!ns) bad(fmt::format("'{}' is no date", date));
  return *ns;
}

// The local time of a later row of the same columns, for LocalZone's look ahead.
std::optional<LocalDateTime> DmonLog::later_time(std::string_view line) const {
  if (line.empty() || line.front() == '#' || plan_.date < 0 || plan_.time < 0) {
    return std::nullopt;
  }
  std::vector<std::string_view> cells;
  csv_ ? split_fields(line, ',', cells) : split_blanks(line, cells);
  const auto date = static_cast<std::size_t>(plan_.date),
             time = static_cast<std::size_t>(plan_.time);
  if (cells.size() <= std::max(date, time)) return std::nullopt;
  return local_of(cells[date], cells[time]);
}

// -o T: the date from --log-start, else the file's modification date less the midnights the
// times pass; a time more than 12 hours before the previous one is the next day.
std::int64_t DmonLog::time_only(std::string_view time) {
  const auto second = seconds_of_day(time);
  if (!second) bad(fmt::format("'{}' is no time as dmon prints it", time));
  if (!day_) {
    std::string from;
    if (!options_.start.empty()) {
      const auto parts = smi::parse_timestamp(options_.start);
      if (!parts) {
        throw Error::usage(
            fmt::format("--log-start {}: not a time like 2026-11-25 22:40:11", options_.start));
      }
      day_ = days_from_civil(parts->year, parts->month, parts->day);
      from = fmt::format("--log-start {}", options_.start);
    } else {
      if (!scan_) scan_ = scan(path_);
      std::error_code error;
      const auto modified = fs::last_write_time(path_, error);
      const std::int64_t end_ns =
          error ? 0
                : std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::file_clock::to_sys(modified).time_since_epoch())
                      .count();
      day_ = local_day(end_ns, zone_) - scan_->midnights;
      from = "the file's modification date (give --log-start when it differs)";
    }
    const auto first = civil_from_days(*day_);
    target_.notes().push_back(fmt::format(
        "{}: the log has times but no dates (dmon -o T); its first day {:04}-{:02}-{:02} taken "
        "from {}, a time more than 12 h before the previous one read as the next day",
        path_.string(), first.year, first.month, first.day, from));
    last_second_ = *second;
  }
  if (*second < last_second_ - 43200) ++*day_;
  last_second_ = *second;
  LocalDateTime t = civil_from_days(*day_);
  t.hour = static_cast<int>(*second / 3600);
  t.minute = static_cast<int>(*second / 60 % 60);
  t.second_ns = *second % 60 * 1'000'000'000;
  const auto ns = utc_ns_of(t);
  if (!ns) bad(fmt::format("'{}' is no time", time));
  return *ns;
}

std::int64_t interval_ns_of(const ReadOptions& options) {
  return static_cast<std::int64_t>(options.interval_s.value_or(1.0) * 1e9);
}

// No date or time: tick × interval from --log-start, else back from the file's end.
std::int64_t DmonLog::timeless() {
  const std::int64_t interval = interval_ns_of(options_);
  if (!timeless_start_) {
    if (!scan_ && options_.start.empty()) scan_ = scan(path_);
    timeless_start_ = timeless_start_ns(path_, options_.start, zone_, scan_ ? scan_->ticks : 0,
                                        interval, target_.notes());
    if (!options_.interval_s) {
      target_.notes().push_back(fmt::format(
          "{}: ticks taken 1 s apart, dmon's default -d 1 (give --log-interval for another -d)",
          path_.string()));
    }
  }
  return *timeless_start_ + tick_ * interval;
}

void DmonLog::fill(const std::vector<std::string_view>& cells, SampleRow& sample,
                   HealthRow& health) {
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Column& c = plan_.columns[i];
    if (!c.stored) continue;
    if (cells[i] == "-") {
      // GPM needs two snapshots: its columns have no value in the first ticks.
      ++tally_.absent[c.name][c.known->role == Role::Gpm ? "'-' (GPM: none before its second "
                                                           "snapshot, or not supported)"
                                                         : "'-' (not supported or not read)"];
      continue;
    }
    const auto value = util::parse_finite_number(cells[i]);
    if (!value) bad(fmt::format("'{}' is no value of {}", cells[i], c.name));
    if (c.known->role != Role::Health) {
      sample.set(c.known->metric, *value * c.known->scale);
    } else if (*value >= 0 && *value == std::floor(*value)) {
      health.set(c.known->health, *value);
    } else {
      bad(fmt::format("'{}' is no value of {} (a whole number)", cells[i], c.name));
    }
  }
}

LogRun& DmonLog::run() {
  if (run_) return *run_;
  RunInfo info;
  info.label = path_.filename().string();
  info.tool_version = fmt::format("nvidia-smi dmon (imported by gpuscope {})", kVersion);
  info.origin = fmt::format("nvidia-smi dmon log {}", path_.string());
  const bool has_times = plan_.time >= 0;
  run_ =
      std::make_unique<LogRun>(target_, std::move(info), has_times ? 0 : interval_ns_of(options_));
  return *run_;
}

void DmonLog::finish() {
  tally_.say(path_, "nvidia-smi dmon reprints it every 44 rows; or runs appended", target_.notes());
  if (stamped_ || times_only_) {
    target_.notes().push_back(
        fmt::format("{}: local times read in {}", path_.string(), zone_.description()));
  }
  std::vector<std::string> problems = {
      "imported from an nvidia-smi dmon log: whole watts and no energy counter (energy is its "
      "power integrated between samples)"};
  if (gpm_gpus_.empty()) {
    problems.push_back(
        "no SM, tensor or DRAM activity (dmon without --gpm-metrics): the "
        "analysis rests on its sm column (utilization.gpu)");
  }
  if (timeless_) {
    problems.push_back(
        "the log has no timestamps: sample times are its ticks times the "
        "interval, not measured");
  } else if (stamped_ || times_only_) {
    problems.push_back("sample times to the whole second, as dmon prints them");
  }
  if (!run_ || !run_->finish(problems)) {
    say_no_samples();
  }
}

}  // namespace

std::string_view SmiDmonFormat::inputs() const {
  return "nvidia-smi dmon logs (any -s and --gpm-metrics columns, with or without -o DT; text or "
         "--format csv)";
}

bool SmiDmonFormat::recognises(const fs::path& path, const ReadOptions&) const {
  if (!is_foreign_text(path)) return false;
  const std::string head = read_head(path, 16 * 1024);
  std::size_t at = 0;
  int headers = 0;
  while (at < head.size()) {
    const std::size_t end = std::min(head.find('\n', at), head.size());
    const std::string_view line = trim(std::string_view(head).substr(at, end - at));
    at = end + 1;
    if (line.empty()) continue;
    if (line.front() != '#') return false;
    bool csv = false;
    const auto words = header_words(line, csv);
    if (headers++ == 0) {
      if (!is_names(words)) return false;
    } else {
      return is_units(words);
    }
  }
  return false;
}

void SmiDmonFormat::read(const std::vector<fs::path>& inputs, const ReadOptions& options,
                         RunTarget& target) const {
  read_each_log<DmonLog>(inputs, options, target);
}

}  // namespace gpuscope::ingest
