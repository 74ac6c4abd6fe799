#include "ingest/local_time.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <mutex>

#include "core/error.hpp"
#include "ingest/smi_csv_fields.hpp"
#include "util/number_text.hpp"

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

// Days from 1970-01-01 to a civil date (proleptic Gregorian).
std::int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era) * 146097 + doe - 719468;
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

// TZ is the process's: set and restored under one lock, never left changed.
std::mutex& tz_mutex() {
  static std::mutex mutex;
  return mutex;
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

LocalZone::LocalZone(std::string zone) : zone_(std::move(zone)) {
  if (zone_.empty()) return;
  if (zone_ == "UTC" || zone_ == "Z" || zone_ == "GMT") {
    fixed_offset_s_ = 0;
    return;
  }
  if (zone_[0] == '+' || zone_[0] == '-') {
    fixed_offset_s_ = parse_offset(zone_);
    if (!fixed_offset_s_) {
      throw Error::usage(fmt::format("--timezone {}: not an offset like +02:00 or -0530", zone_));
    }
    return;
  }
  std::error_code error;
  if (zone_.find("..") != std::string::npos || !fs::is_regular_file(zone_folder() / zone_, error)) {
    throw Error::usage(
        fmt::format("--timezone {}: no such zone in {}", zone_, zone_folder().string()), {},
        "give an IANA zone name (Europe/Zurich, America/Chicago), UTC or an offset like +02:00; "
        "zone names need the tzdata package");
  }
  tz_value_ = ":" + zone_;
}

std::string LocalZone::description() const {
  if (zone_.empty()) return fmt::format("this machine's zone ({})", machine_zone_name());
  return fmt::format("{} (--timezone)", zone_);
}

std::optional<std::int64_t> LocalZone::minute_start(const LocalDateTime& t, int isdst) {
  const std::int64_t local_s =
      (days_from_civil(t.year, t.month, t.day) * 24 + t.hour) * 3600 + t.minute * 60;
  if (fixed_offset_s_) return local_s - *fixed_offset_s_;
  std::tm tm{};
  tm.tm_year = t.year - 1900;
  tm.tm_mon = t.month - 1;
  tm.tm_mday = t.day;
  tm.tm_hour = t.hour;
  tm.tm_min = t.minute;
  tm.tm_isdst = isdst;
  std::lock_guard lock(tz_mutex());
  std::optional<std::string> saved;
  if (!tz_value_.empty()) {
    if (const char* tz = std::getenv("TZ")) saved = tz;
    setenv("TZ", tz_value_.c_str(), 1);
    tzset();
  }
  const std::time_t utc = std::mktime(&tm);
  if (!tz_value_.empty()) {
    if (saved) {
      setenv("TZ", saved->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  if (utc == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<std::int64_t>(utc);
}

std::optional<std::int64_t> LocalZone::to_utc_ns(const LocalDateTime& t) {
  if (!valid_date(t)) return std::nullopt;
  const std::int64_t key =
      ((static_cast<std::int64_t>(t.year) * 13 + t.month) * 32 + t.day) * 1440 + t.hour * 60 +
      t.minute;
  if (key != cached_key_) {
    const auto start = minute_start(t, -1);
    if (!start) return std::nullopt;
    cached_key_ = key;
    cached_start_s_ = *start;
  }
  std::int64_t ns = cached_start_s_ * 1'000'000'000 + t.second_ns;
  // The hour a daylight-saving change repeats: mktime picks one reading; when it puts this time
  // more than 30 minutes before the previous one, the other reading keeps the log in order.
  if (have_last_ && ns < last_ns_ - 1'800'000'000'000 && !fixed_offset_s_) {
    for (int isdst : {0, 1}) {
      const auto other = minute_start(t, isdst);
      if (other && *other * 1'000'000'000 + t.second_ns >= last_ns_ - 1'800'000'000'000) {
        cached_start_s_ = *other;
        ns = *other * 1'000'000'000 + t.second_ns;
        break;
      }
    }
  }
  last_ns_ = ns;
  have_last_ = true;
  return ns;
}

std::int64_t timeless_start_ns(const fs::path& file, const std::string& start, LocalZone& zone,
                               std::size_t ticks, std::int64_t interval_ns,
                               std::vector<std::string>& notes) {
  if (!start.empty()) {
    const auto parts = smi::parse_timestamp(start);
    const auto ns = parts ? zone.to_utc_ns({parts->year, parts->month, parts->day, parts->hour,
                                            parts->minute, parts->second_ns})
                          : std::nullopt;
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
