#include "ingest/logs/dcgmi_dmon_format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "core/error.hpp"
#include "core/health.hpp"
#include "core/mig.hpp"
#include "core/version.hpp"
#include "dcgm/fields.hpp"
#include "ingest/import.hpp"
#include "ingest/logs/local_time.hpp"
#include "ingest/logs/log_reader.hpp"
#include "ingest/logs/log_run.hpp"
#include "ingest/logs/log_tally.hpp"
#include "ingest/logs/log_text.hpp"
#include "util/number_text.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;

// A column header (DCGM's field "short name", as `dcgmi dmon -l` lists them) and its field id
// (dcgmlib/src/dcgm_fields.cpp).
struct ShortName {
  std::string_view name;
  unsigned short field;
};

// clang-format off
constexpr ShortName kShortNames[] = {
  {"SMCLK", 100}, {"MMCLK", 101}, {"DVCCTR", 112}, {"MMTMP", 140}, {"TMPTR", 150},
  {"POWER", 155}, {"TOTEC", 156}, {"POWINST", 157}, {"SDTMP", 158}, {"PMLMT", 160},
  {"EPLMT", 164}, {"PSTAT", 190}, {"FANSP", 191}, {"TXTPT", 200}, {"RXTPT", 201},
  {"RPCTR", 202}, {"GPUTL", 203}, {"MCUTL", 204}, {"ECUTL", 206}, {"DCUTL", 207},
  {"XIDER", 230}, {"PVIOL", 240}, {"TVIOL", 241}, {"FBTTL", 250}, {"FBFRE", 251},
  {"FBUSD", 252}, {"FBRSV", 253}, {"FBUSP", 254}, {"ECCUR", 300}, {"ESVTL", 310},
  {"EDVTL", 311}, {"ESATL", 312}, {"EDATL", 313}, {"RPSBE", 390}, {"RPDBE", 391},
  {"RPPEN", 392}, {"URMPS", 393}, {"CRMPS", 394}, {"RRF", 395}, {"RRP", 396},
  {"GRACT", 1001}, {"SMACT", 1002}, {"SMOCC", 1003}, {"TENSO", 1004}, {"DRAMA", 1005},
  {"FP64A", 1006}, {"FP32A", 1007}, {"FP16A", 1008}, {"PCITX", 1009}, {"PCIRX", 1010},
  {"NVLTX", 1011}, {"NVLRX", 1012}, {"TIMMA", 1013}, {"THMMA", 1014}, {"TDFMA", 1015},
  {"INTAC", 1016},
};

// Device fields dcgm/fields.hpp does not list: live sampling reads them from NVML, and that table
// is also the list of fields it watches. dcgmi prints them in the catalog's units already.
constexpr dcgm::FieldMapping kDeviceFields[] = {
  {100, Metric::SmClockMhz, 1.0, true},
  {101, Metric::MemClockMhz, 1.0, true},
  {112, Metric::ClockEventReasons, 1.0, true},  // the bitmask, printed in decimal
  {140, Metric::MemoryTemperatureC, 1.0, true},
  {150, Metric::TemperatureC, 1.0, true},
  {155, Metric::PowerW, 1.0, true},
  {156, Metric::EnergyMj, 1.0, true},  // mJ since the driver loaded: energy from differences
  {157, Metric::PowerInstantW, 1.0, true},
  {164, Metric::PowerLimitW, 1.0, true},
  {204, Metric::MemUtilPct, 1.0, true},
};

// The health fields (dcgm_fields.h of DCGM 4.6) and the health_samples column each fills, as
// DCGM prints them: counts, percent, 1/0 flags, violation times in ns (fields 240/241 are NVML's
// fields 74/75, read as they are).
struct HealthField {
  unsigned short field;
  HealthMetric metric;
};
constexpr HealthField kHealthFields[] = {
  {202, HealthMetric::PcieReplays},
  {206, HealthMetric::EncoderUtilPct},
  {207, HealthMetric::DecoderUtilPct},
  {240, HealthMetric::ViolationPowerNs},
  {241, HealthMetric::ViolationThermalNs},
  {300, HealthMetric::EccEnabled},
  {310, HealthMetric::EccCorrectedVolatile},
  {311, HealthMetric::EccUncorrectedVolatile},
  {312, HealthMetric::EccCorrectedAggregate},
  {313, HealthMetric::EccUncorrectedAggregate},
  {390, HealthMetric::RetiredPagesSbe},
  {391, HealthMetric::RetiredPagesDbe},
  {392, HealthMetric::RetiredPagesPending},
  {393, HealthMetric::RemappedRowsUncorrectable},
  {394, HealthMetric::RemappedRowsCorrectable},
  {395, HealthMetric::RowRemapFailure},
  {396, HealthMetric::RowRemapPending},
};
// clang-format on

constexpr unsigned short kXidErrors = 230;  // the last Xid (0: none yet): a change is an event
constexpr unsigned short kFbTotal = 250;    // the GPU's memory, MiB: a fact, not a sample
constexpr unsigned short kFirstProfilingField = 1001;

const ShortName* short_named(std::string_view name) {
  for (const ShortName& s : kShortNames) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const HealthField* health_field(unsigned short field) {
  for (const auto& h : kHealthFields) {
    if (h.field == field) return &h;
  }
  return nullptr;
}

const dcgm::FieldMapping* mapping_of(unsigned short field) {
  if (const auto* m = dcgm::field_mapping(field)) return m;
  for (const auto& m : kDeviceFields) {
    if (m.field == field) return &m;
  }
  return nullptr;
}

// The column names of a header line ("#Entity  POWER ..." or DCGM 2.2-2.3's "# Entity ..."),
// or nullopt when the line is none.
std::optional<std::vector<std::string_view>> header_names(std::string_view text) {
  std::vector<std::string_view> words;
  split_blanks(text, words);
  std::size_t skip = 0;
  if (!words.empty() && words[0] == "#Entity") skip = 1;
  if (words.size() >= 2 && words[0] == "#" && words[1] == "Entity") skip = 2;
  if (skip == 0) return std::nullopt;
  words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(skip));
  return words;
}

bool is_units_line(std::string_view text) {
  return text == "ID" || text == "Id" || text.starts_with("ID ") || text.starts_with("Id ");
}

// Ctrl-C's trailer ("do to" before DCGM 3.4).
bool is_trailer(std::string_view text) {
  return text.starts_with("dmon was stopped");
}

enum class EntityKind { Gpu, GpuInstance, Other };

struct Entity {
  EntityKind kind = EntityKind::Other;
  unsigned id = 0;
  std::size_t words = 2;  // how many words of the row it takes
};

// The entity a row starts with: "GPU 0", "GPU-I 7", "CPU Core 12", "GPU 0 LINK 3" (4.6), ...;
// nullopt for a row that starts with no entity dcgmi prints.
std::optional<Entity> entity_of(const std::vector<std::string_view>& words) {
  static constexpr std::string_view kOthers[] = {"GPU-CI", "Switch", "vGPU",   "CPU",
                                                 "CX",     "LINK",   "UNKNOWN"};
  if (words.size() < 2) return std::nullopt;
  Entity e;
  const std::string_view group = words[0];
  if ((group == "GPU" || group == "SW") && words.size() >= 4 && words[2] == "LINK") {
    e.words = 4;
    return e;
  }
  if (group == "CPU" && words[1] == "Core") {
    e.words = 3;
    return words.size() >= 3 ? std::optional<Entity>(e) : std::nullopt;
  }
  if (group == "GPU" || group == "GPU-I") {
    const auto id = util::parse_unsigned(words[1]);
    // Below 1000: a GPU's index, or an instance's in core/mig's range of DCGM entity ids.
    if (!id || *id >= kDcgmInstanceIndexEnd - kDcgmInstanceIndexBase) return std::nullopt;
    e.kind = group == "GPU" ? EntityKind::Gpu : EntityKind::GpuInstance;
    e.id = static_cast<unsigned>(*id);
    return e;
  }
  for (auto other : kOthers) {
    if (group == other) return e;
  }
  return std::nullopt;
}

// The entity's words as one key: a row whose entity the tick already had starts the next tick.
std::string entity_key(const std::vector<std::string_view>& words, const Entity& e) {
  std::string key;
  for (std::size_t i = 0; i < e.words; ++i) key += std::string(words[i]) + ' ';
  return key;
}

// A first pass: how many ticks the log holds (for its start, back from the file's end).
std::size_t count_ticks(const fs::path& path) {
  LogLines lines(path);
  std::string_view line;
  std::vector<std::string_view> words;
  std::set<std::string> tick;
  std::size_t ticks = 0;
  while (lines.next(line)) {
    const auto text = trim(line);
    if (text.empty() || lines.unterminated() || text.front() == '#' || is_units_line(text)) {
      continue;
    }
    split_blanks(text, words);
    const auto e = entity_of(words);
    if (!e) continue;
    if (!tick.insert(entity_key(words, *e)).second || ticks == 0) {
      if (ticks > 0) tick = {entity_key(words, *e)};
      ++ticks;
    }
  }
  return ticks;
}

struct Column {
  std::string name;
  unsigned short field = 0;                     // 0: not a field dcgmi has (to gpuscope)
  const dcgm::FieldMapping* mapping = nullptr;  // nullptr: no samples column
  const HealthField* health = nullptr;          // nullptr: no health_samples column
  bool stored = false;                          // its values are kept (first of its metric)
};

struct Plan {
  std::vector<Column> columns;
  std::string text;  // the header line, to know it when it repeats
  int fb_total = -1;
  int xid = -1;
  bool profiling = false;  // a profiling field (1001+) is kept
};

Plan plan_of(const std::vector<std::string_view>& names, std::string_view text, LogTally& tally) {
  Plan plan;
  plan.text = std::string(text);
  std::set<Metric> taken;
  std::set<HealthMetric> health_taken;
  for (auto name : names) {
    Column c{std::string(name)};
    const ShortName* known = short_named(name);
    if (known == nullptr) {
      tally.left_out[c.name] = "columns not understood";
    } else {
      c.field = known->field;
      c.mapping = mapping_of(known->field);
      c.health = health_field(known->field);
      if (c.field == kFbTotal) {
        plan.fb_total = static_cast<int>(plan.columns.size());
      } else if (c.field == kXidErrors) {
        plan.xid = static_cast<int>(plan.columns.size());
      } else if (c.health != nullptr) {
        c.stored = health_taken.insert(c.health->metric).second;
        if (!c.stored) tally.left_out[c.name] = "another column gives the same quantity";
      } else if (c.mapping == nullptr) {
        tally.left_out[fmt::format("{} ({})", c.name, c.field)] =
            "DCGM fields gpuscope has no column for";
      } else {
        c.stored = taken.insert(c.mapping->metric).second;
        plan.profiling = plan.profiling || (c.stored && c.field >= kFirstProfilingField);
        if (!c.stored) tally.left_out[c.name] = "another column gives the same quantity";
      }
    }
    plan.columns.push_back(std::move(c));
  }
  return plan;
}

class DcgmiLog : LogReader {
 public:
  DcgmiLog(const fs::path& path, const ReadOptions& options, RunTarget& target)
      : LogReader(path, options, target) {}

  void read();

 private:
  void handle(std::string_view text);
  void row(std::string_view text);
  std::int64_t time_of(const std::string& key);
  void fill(const std::vector<std::string_view>& values, SampleRow& sample, HealthRow& health);
  void xid(const std::vector<std::string_view>& values, unsigned index, std::int64_t wall_ns);
  void describe(const std::vector<std::string_view>& values, const Entity& e, unsigned index);
  LogRun& run();
  void finish();

  Plan plan_;
  std::vector<std::string_view> words_;
  std::unique_ptr<LogRun> run_;
  std::set<unsigned> described_;
  std::set<std::string> tick_entities_;
  std::int64_t tick_ = -1;
  std::optional<std::int64_t> start_ns_;
  std::size_t instances_ = 0;                  // GPU-I rows
  std::map<unsigned, std::int64_t> last_xid_;  // by GPU: XIDER's last value
  std::set<unsigned> xid_at_start_;            // GPUs whose first XIDER was already an Xid
  std::optional<std::size_t> stopped_at_;
};

void DcgmiLog::read() {
  std::string_view text;
  while (next_log_line(lines_, text, target_.notes())) handle(text);
  finish();
}

void DcgmiLog::handle(std::string_view text) {
  if (const auto names = header_names(text)) {
    // dcgmi repeats its header every 14 ticks: the same one goes on with the same columns.
    if (plan_.text == text) return;
    if (!plan_.columns.empty()) tally_.new_headers.push_back(lines_.number());
    plan_ = plan_of(*names, text, tally_);
    return;
  }
  if (is_units_line(text)) return;
  if (is_trailer(text)) {
    stopped_at_ = lines_.number();
    return;
  }
  if (plan_.columns.empty()) bad("a row before any #Entity header line");
  row(text);
}

void DcgmiLog::row(std::string_view text) {
  split_blanks(text, words_);
  const auto e = entity_of(words_);
  if (!e) {
    bad(fmt::format("'{}' starts with no entity dcgmi dmon prints (GPU 0, GPU-I 7, ...)",
                    words_.empty() ? text : words_[0]),
        "a line of another log, or a damaged one: fix or remove it");
  }
  const std::string key = entity_key(words_, *e);
  const std::int64_t wall_ns = time_of(key);
  const std::vector<std::string_view> values(words_.begin() + static_cast<std::ptrdiff_t>(e->words),
                                             words_.end());
  if (values.size() > plan_.columns.size()) {
    bad(fmt::format("{} values where the header has {} columns", values.size(),
                    plan_.columns.size()),
        "a line of another log, or a damaged one: fix or remove it");
  }
  if (e->kind == EntityKind::Other) {
    ++tally_
          .skipped[fmt::format("rows of entities other than GPUs and MIG GPU instances "
                               "({}...); gpuscope samples GPUs",
                               key)];
    return;
  }
  SampleRow sample;
  sample.wall_ns = wall_ns;
  // dcgmi names an instance by DCGM's entity id alone, not its GPU and GPU instance id: a device
  // of its own (core/mig.hpp), never an index read as some GPU's instance.
  sample.device_index = e->kind == EntityKind::Gpu ? e->id : dcgm_instance_device_index(e->id);
  instances_ += e->kind == EntityKind::GpuInstance ? 1U : 0U;
  HealthRow health;
  health.device_index = sample.device_index;
  health.wall_ns = wall_ns;
  fill(values, sample, health);
  describe(values, *e, sample.device_index);
  run().push(sample, static_cast<std::int64_t>(line_now()));
  if (health.present.any()) run().push(health);
  xid(values, sample.device_index, wall_ns);
}

// XIDER holds the GPU's last Xid: a change to another (non-zero) one is a new Xid, an event. A
// first value that is already an Xid is one too (said in a note: it may predate the log); the
// same Xid again cannot be told from the log.
void DcgmiLog::xid(const std::vector<std::string_view>& values, unsigned index,
                   std::int64_t wall_ns) {
  const auto at = static_cast<std::size_t>(plan_.xid);
  if (plan_.xid < 0 || at >= values.size() || values[at] == "N/A") return;
  const auto value = util::parse_finite_number(values[at]);
  if (!value || *value < 0 || *value != std::floor(*value)) {
    bad(fmt::format("'{}' is no Xid (XIDER, field 230)", values[at]));
  }
  const auto number = static_cast<std::int64_t>(*value);
  const auto [last, first] = last_xid_.try_emplace(index, 0);
  if (number == last->second || number == 0) {
    last->second = number;
    return;
  }
  if (first) xid_at_start_.insert(index);
  last->second = number;
  run().push(Event{wall_ns, 0, index, EventKind::Xid, fmt::format("Xid {}", number)});
}

// The tick of the row of entity `key` (a row of an entity the tick already had starts the
// next), as a time: tick × interval from --log-start or back from the file's end.
std::int64_t DcgmiLog::time_of(const std::string& key) {
  if (tick_ < 0 || !tick_entities_.insert(key).second) {
    ++tick_;
    tick_entities_ = {key};
  }
  const auto interval = static_cast<std::int64_t>(options_.interval_s.value_or(1.0) * 1e9);
  if (!start_ns_) {
    const std::size_t ticks = options_.start.empty() ? count_ticks(path_) : 0;
    start_ns_ = timeless_start_ns(path_, options_.start, zone_, ticks, interval, target_.notes());
    if (!options_.interval_s) {
      target_.notes().push_back(fmt::format(
          "{}: ticks taken 1 s apart, dcgmi's default -d 1000 (give --log-interval for another "
          "-d)",
          path_.string()));
    }
  }
  return *start_ns_ + tick_ * interval;
}

void DcgmiLog::fill(const std::vector<std::string_view>& values, SampleRow& sample,
                    HealthRow& health) {
  for (std::size_t i = 0; i < plan_.columns.size(); ++i) {
    const Column& c = plan_.columns[i];
    if (!c.stored) continue;
    if (i >= values.size()) {
      // A field DCGM returned nothing for prints as blanks: the row ends early.
      ++tally_.absent[c.name]["blank (DCGM returned no value)"];
      continue;
    }
    if (values[i] == "N/A") {
      ++tally_.absent[c.name]["N/A"];
      continue;
    }
    const auto value = util::parse_finite_number(values[i]);
    if (!value) bad(fmt::format("'{}' is no value of {}", values[i], c.name));
    if (c.health == nullptr) {
      sample.set(c.mapping->metric, *value * c.mapping->scale);
    } else if (*value >= 0 && *value == std::floor(*value)) {
      health.set(c.health->metric, *value);
    } else {
      bad(fmt::format("'{}' is no value of {} (a whole number)", values[i], c.name));
    }
  }
}

// The GPU's facts: its name, its memory (FBTTL) from the first row that has it.
void DcgmiLog::describe(const std::vector<std::string_view>& values, const Entity& e,
                        unsigned index) {
  DeviceDescription& d = run().device(index);
  if (described_.insert(index).second) {
    // dcgmi dmon gives an instance's DCGM entity id only: a device of its own, not linked.
    d.name = e.kind == EntityKind::GpuInstance ? fmt::format("MIG GPU instance {} (DCGM id)", e.id)
                                               : std::string();
  }
  if (plan_.profiling && !d.saturation_source) {
    d.saturation_source = "dcgm";
    d.saturation_detail = "dcgmi dmon log";
  }
  const auto at = static_cast<std::size_t>(plan_.fb_total);
  if (plan_.fb_total >= 0 && !d.memory_total_bytes && at < values.size()) {
    if (const auto mib = util::parse_finite_number(values[at]); mib && *mib > 0) {
      d.memory_total_bytes = static_cast<std::uint64_t>(*mib * dcgm::kMiB);
    }
  }
}

LogRun& DcgmiLog::run() {
  if (run_) return *run_;
  RunInfo info;
  info.label = path_.filename().string();
  info.tool_version = fmt::format("dcgmi dmon (imported by gpuscope {})", kVersion);
  info.origin = fmt::format("dcgmi dmon log {}", path_.string());
  const auto interval = static_cast<std::int64_t>(options_.interval_s.value_or(1.0) * 1e9);
  run_ = std::make_unique<LogRun>(target_, std::move(info), interval);
  return *run_;
}

void DcgmiLog::finish() {
  auto& notes = target_.notes();
  tally_.say(path_, {}, notes);
  if (instances_ > 0) {
    notes.push_back(fmt::format(
        "{}: MIG GPU instances (GPU-I rows) kept as devices {} + their DCGM entity id, not linked "
        "to their GPU (dcgmi dmon names neither the GPU nor the GPU instance id); DCGM reads "
        "GPU-level fields (power, temperatures, clocks, memory) on them from their parent GPU",
        path_.string(), kDcgmInstanceIndexBase));
  }
  if (!xid_at_start_.empty()) {
    std::string gpus;
    for (unsigned gpu : xid_at_start_) gpus += (gpus.empty() ? "" : ", ") + std::to_string(gpu);
    notes.push_back(fmt::format(
        "{}: XIDER (field 230) already held an Xid at the first tick of GPU {}: kept as an Xid at "
        "that tick, though it may be older than the log",
        path_.string(), gpus));
  }
  if (stopped_at_) {
    notes.push_back(fmt::format("{}:{}: dcgmi dmon was stopped by a signal (Ctrl-C) there",
                                path_.string(), *stopped_at_));
  }
  std::vector<std::string> problems = {
      "imported from a dcgmi dmon log: dcgmi prints no timestamps, so sample times are its "
      "ticks times the interval, not measured (each real tick is longer by the query)"};
  bool energy = false, profiling = false;
  for (const auto& c : plan_.columns) {
    energy = energy || (c.stored && c.mapping != nullptr && c.health == nullptr &&
                        c.mapping->metric == Metric::EnergyMj);
    profiling = profiling || (c.stored && c.field >= kFirstProfilingField);
  }
  if (!energy) {
    problems.push_back(
        "no energy counter (TOTEC, field 156) in the log: energy is its power "
        "integrated between samples, where it has power (POWER, field 155)");
  }
  if (!profiling) {
    problems.push_back(
        "no DCGM profiling fields (1001-1016) in the log: no SM, tensor or DRAM "
        "activity");
  }
  if (!run_ || !run_->finish(problems)) say_no_samples();
}

}  // namespace

std::string_view DcgmiDmonFormat::inputs() const {
  return "dcgmi dmon logs (dcgmi dmon -e FIELDS, any DCGM version's layout)";
}

bool DcgmiDmonFormat::recognises(const fs::path& path, const ReadOptions&) const {
  if (!is_foreign_text(path)) return false;
  const std::string head = read_head(path, 16 * 1024);
  const std::string_view line = first_line(head);
  return !line.empty() && header_names(line).has_value();
}

void DcgmiDmonFormat::read(const std::vector<fs::path>& inputs, const ReadOptions& options,
                           RunTarget& target) const {
  read_each_log<DcgmiLog>(inputs, options, target);
}

}  // namespace gpuscope::ingest
