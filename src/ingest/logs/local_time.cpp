#include "ingest/logs/local_time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <utility>

#include "core/error.hpp"
#include "ingest/logs/smi_csv_fields.hpp"
#include "util/number_text.hpp"
#include "util/small_file.hpp"
#include "util/time_zone.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;

// "+02:00", "-0530", "+2": seconds east of UTC.
std::optional<std::int64_t> parse_offset(const std::string& zone) {
  if (zone.size() < 2 || (zone[0] != '+' && zone[0] != '-')) return std::nullopt;
  std::string digits;
  for (char c : zone.substr(1)) {
    if (c != ':') digits += c;
  }
  const auto all = util::parse_unsigned(digits);
  if (!all) return std::nullopt;
  long hours = 0, minutes = 0;
  if (digits.size() <= 2) {
    hours = static_cast<long>(*all);
  } else if (digits.size() == 4) {
    hours = static_cast<long>(*all / 100);
    minutes = static_cast<long>(*all % 100);
  } else {
    return std::nullopt;
  }
  if (hours > 14 || minutes > 59) return std::nullopt;
  const std::int64_t seconds = hours * 3600 + minutes * 60;
  return zone[0] == '-' ? -seconds : seconds;
}

fs::path zone_folder() {
  const char* dir = std::getenv("TZDIR");
  return dir != nullptr && *dir != '\0' ? fs::path(dir) : fs::path("/usr/share/zoneinfo");
}

bool valid_date(const LocalDateTime& t) {
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  // Nanoseconds since 1970 in 64 bits reach 2262: no log is dated outside these years.
  if (t.year < 1970 || t.year > 2200) return false;
  if (t.month < 1 || t.month > 12 || t.day < 1 || t.hour < 0 || t.hour > 23 || t.minute < 0 ||
      t.minute > 59 || t.second_ns < 0 || t.second_ns >= 61'000'000'000) {
    return false;
  }
  const bool leap = (t.year % 4 == 0 && t.year % 100 != 0) || t.year % 400 == 0;
  return t.day <= kDays[t.month - 1] && (t.month != 2 || t.day <= 28 || leap);
}

// Seconds since 1970-01-01 00:00 of the local calendar, to the start of the minute.
std::int64_t local_minute_s(const LocalDateTime& t) {
  const std::int64_t days =
      util::days_from_civil(t.year, static_cast<unsigned>(t.month), static_cast<unsigned>(t.day));
  return (days * 24 + t.hour) * 3600 + t.minute * 60;
}

std::int64_t local_ns(const LocalDateTime& t) {
  return local_minute_s(t) * 1'000'000'000 + t.second_ns;
}

std::string time_text(const LocalDateTime& t) {
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", t.year, t.month, t.day, t.hour,
                     t.minute, t.second_ns / 1'000'000'000);
}

std::string offset_text(std::int64_t offset_s) {
  const std::int64_t magnitude = offset_s < 0 ? -offset_s : offset_s;
  return fmt::format("{}{:02}:{:02}", offset_s < 0 ? '-' : '+', magnitude / 3600,
                     magnitude / 60 % 60);
}

// A zone name as the database spells them ("Europe/Zurich", "Etc/GMT+5"): never a path out of
// the zone folder ("../../etc/passwd", "/etc/passwd").
bool valid_zone_name(const std::string& name) {
  if (name.empty() || name.size() > 255) return false;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t end = std::min(name.find('/', start), name.size());
    const std::string part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (const char c : part) {
      const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '+' || c == '.';
      if (!ok) return false;
    }
    start = end + 1;
  }
  return true;
}

std::optional<util::TimeZone> read_zone_file(const fs::path& file, std::string& why) {
  const auto bytes = util::read_small_file(file.string(), std::size_t{1} << 20);
  if (!bytes) {
    why = bytes.error().reason;
    return std::nullopt;
  }
  auto zone = util::TimeZone::from_tzif(*bytes);
  if (!zone) {
    why = zone.error();
    return std::nullopt;
  }
  return *zone;
}

// This machine's zone, as the C library would take it: TZ (a zone name, a file, or a POSIX
// rule; empty: UTC), else /etc/localtime, else UTC. Read, never set.
util::TimeZone machine_zone() {
  const char* tz = std::getenv("TZ");
  std::string why;
  if (tz == nullptr) {
    std::error_code error;
    if (!fs::exists("/etc/localtime", error)) return util::TimeZone::fixed(0);
    if (auto zone = read_zone_file("/etc/localtime", why)) return *zone;
    throw Error::usage(fmt::format("this machine's zone (/etc/localtime) cannot be read"), why,
                       "give the log's zone with --timezone");
  }
  std::string value = *tz == ':' ? tz + 1 : tz;
  if (value.empty()) return util::TimeZone::fixed(0);
  if (value.front() == '/') {
    if (auto zone = read_zone_file(value, why)) return *zone;
  } else if (valid_zone_name(value) && fs::is_regular_file(zone_folder() / value)) {
    if (auto zone = read_zone_file(zone_folder() / value, why)) return *zone;
  } else if (auto rule = util::TimeZone::from_posix(value)) {
    return *rule;
  } else {
    why = fmt::format("no zone of that name in {} and no POSIX TZ rule", zone_folder().string());
  }
  throw Error::usage(fmt::format("TZ={}: this machine's zone cannot be read", tz), why,
                     "give the log's zone with --timezone");
}

}  // namespace

std::string machine_zone_name() {
  if (const char* tz = std::getenv("TZ"); tz != nullptr && *tz != '\0') {
    return *tz == ':' ? std::string(tz + 1) : std::string(tz);
  }
  std::error_code error;
  const fs::path target = fs::read_symlink("/etc/localtime", error);
  if (!error) {
    const std::string text = target.string();
    const auto at = text.find("zoneinfo/");
    if (at != std::string::npos) return text.substr(at + 9);
  }
  return fs::exists("/etc/localtime", error) ? "unknown" : "UTC";
}

LocalZone::LocalZone(std::string zone)
    : zone_(std::move(zone)), name_(zone_), rules_(util::TimeZone::fixed(0)) {
  if (zone_.empty()) {
    name_ = machine_zone_name();
    rules_ = machine_zone();
    return;
  }
  if (zone_ == "UTC" || zone_ == "Z" || zone_ == "GMT") return;
  if (zone_[0] == '+' || zone_[0] == '-') {
    const auto offset = parse_offset(zone_);
    if (!offset) {
      throw Error::usage(fmt::format("--timezone {}: not an offset like +02:00 or -0530", zone_));
    }
    rules_ = util::TimeZone::fixed(*offset);
    return;
  }
  const std::string hint =
      "give an IANA zone name (Europe/Zurich, America/Chicago), UTC or an offset like +02:00; "
      "zone names need the tzdata package";
  if (!valid_zone_name(zone_)) {
    throw Error::usage(fmt::format("--timezone {}: not a zone name", zone_),
                       "a zone is named as in the time zone database, never by a path", hint);
  }
  std::string why;
  const fs::path file = zone_folder() / zone_;
  std::error_code error;
  if (!fs::is_regular_file(file, error)) {
    throw Error::usage(
        fmt::format("--timezone {}: no such zone in {}", zone_, zone_folder().string()), {}, hint);
  }
  auto rules = read_zone_file(file, why);
  if (!rules) {
    throw Error::usage(fmt::format("--timezone {}: {} cannot be read", zone_, file.string()), why,
                       hint);
  }
  rules_ = *rules;
}

std::string LocalZone::description() const {
  if (zone_.empty()) return fmt::format("this machine's zone ({})", machine_zone_name());
  return fmt::format("{} (--timezone)", zone_);
}

std::int64_t LocalZone::offset_s_at(std::int64_t utc_ns) const {
  const std::int64_t s = utc_ns / 1'000'000'000 - (utc_ns % 1'000'000'000 < 0 ? 1 : 0);
  return rules_.offset_at(s);
}

std::optional<std::int64_t> LocalZone::to_utc_ns(const LocalDateTime& t, const LaterTimes& later) {
  if (!valid_date(t)) return std::nullopt;
  const std::int64_t minute = local_minute_s(t);
  if (minute != cached_minute_) {
    cached_utc_s_ = rules_.utc_of_local(minute);
    cached_minute_ = minute;
  }
  if (cached_utc_s_.empty()) {
    throw Error::usage(
        fmt::format("{} does not exist in {}", time_text(t), name_),
        fmt::format("the clocks skipped that hour, from {} to {}",
                    offset_text(rules_.offset_at(minute - 86400)),
                    offset_text(rules_.offset_at(minute + 86400))),
        "a clock in that zone never shows it: check that --timezone is the log's zone");
  }
  std::int64_t utc_s = cached_utc_s_.front();
  if (cached_utc_s_.size() > 1) utc_s = placed(t, utc_s, cached_utc_s_.back(), later);
  const std::int64_t ns = utc_s * 1'000'000'000 + t.second_ns;
  last_ns_ = ns;
  have_last_ = true;
  return ns;
}

// A time the clocks show twice (`earlier_s` in summer time, `later_s` after the change).
std::int64_t LocalZone::placed(const LocalDateTime& t, std::int64_t earlier_s, std::int64_t later_s,
                               const LaterTimes& later) const {
  constexpr std::int64_t kHalfHourNs = 1'800'000'000'000;
  const std::int64_t earlier_ns = earlier_s * 1'000'000'000 + t.second_ns;
  // A time of the log close before: the reading that keeps the log in order (from the first
  // pass back to the start of the hour is the second pass).
  if (have_last_ && last_ns_ >= earlier_ns - 2 * kHalfHourNs) {
    return earlier_ns >= last_ns_ - kHalfHourNs ? earlier_s : later_s;
  }
  if (later) {
    if (const auto first = first_pass_from(t, later)) return *first ? earlier_s : later_s;
  }
  const std::int64_t earlier_offset = local_minute_s(t) - earlier_s;
  const std::int64_t later_offset = earlier_offset - (later_s - earlier_s);
  throw Error::usage(
      fmt::format("{} comes twice in {} ({}, then {})", time_text(t), name_,
                  offset_text(earlier_offset), offset_text(later_offset)),
      "the log begins in the hour the clocks repeat, and what follows does not tell which pass "
      "it is: it ends inside that hour or goes elsewhere",
      fmt::format("give --timezone as the fixed offset the log was written in ({} for the first "
                  "pass, {} for the second), or a --log-start outside that hour for a log "
                  "without dates",
                  offset_text(earlier_offset), offset_text(later_offset)));
}

// Which pass of the repeated hour `t` (the first time of a log) is in, from the log's later
// times: true when they go back by about an hour into the repeated hour (`t` was in the first
// pass), false when they leave the hour forward without going back (the second); nullopt when
// the log ends first or goes elsewhere.
std::optional<bool> LocalZone::first_pass_from(const LocalDateTime& t,
                                               const LaterTimes& later) const {
  constexpr std::int64_t kHalfHourNs = 1'800'000'000'000;
  std::int64_t previous = local_ns(t);
  bool restart = true;
  while (const auto next = later(std::exchange(restart, false))) {
    if (!valid_date(*next)) continue;
    const std::int64_t now = local_ns(*next);
    const auto readings = rules_.utc_of_local(local_minute_s(*next)).size();
    if (now < previous - kHalfHourNs) {
      if (readings > 1) return true;
      return std::nullopt;
    }
    if (readings == 1 && now > previous) return false;
    previous = now;
  }
  return std::nullopt;
}

std::int64_t timeless_start_ns(const fs::path& file, const std::string& start, LocalZone& zone,
                               std::size_t ticks, std::int64_t interval_ns,
                               std::vector<std::string>& notes) {
  if (!start.empty()) {
    const auto parts = smi::parse_timestamp(start);
    std::optional<std::int64_t> ns;
    try {
      if (parts) {
        ns = zone.to_utc_ns(
            {parts->year, parts->month, parts->day, parts->hour, parts->minute, parts->second_ns});
      }
    } catch (const Error& e) {
      throw Error::usage(fmt::format("--log-start {}: {}", start, e.summary()), e.reason(),
                         e.hint());
    }
    if (!ns) {
      throw Error::usage(fmt::format("--log-start {}: not a time like 2026-11-25 22:40:11", start));
    }
    notes.push_back(fmt::format(
        "{}: the log has no timestamps; its first tick taken at "
        "--log-start {} in {}, ticks {:g} s apart",
        file.string(), start, zone.description(), static_cast<double>(interval_ns) / 1e9));
    return *ns;
  }
  std::error_code error;
  const auto modified = fs::last_write_time(file, error);
  const auto end = error ? std::int64_t{0}
                         : std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::file_clock::to_sys(modified).time_since_epoch())
                               .count();
  const auto span = static_cast<std::int64_t>(ticks > 0 ? ticks - 1 : 0) * interval_ns;
  notes.push_back(
      fmt::format("{}: the log has no timestamps; its last tick taken at the file's "
                  "modification time, ticks {:g} s apart (give --log-start and "
                  "--log-interval when they differ)",
                  file.string(), static_cast<double>(interval_ns) / 1e9));
  return end - span;
}

}  // namespace gpuscope::ingest
