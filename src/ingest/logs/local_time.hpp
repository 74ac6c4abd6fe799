// Local wall-clock times in logs (nvidia-smi prints "2026/11/25 22:40:11.719" in the machine's
// zone, without the zone) as UTC: in the zone the user names (--timezone: an IANA name from the
// system's time zone database, "UTC", or a fixed offset "+02:00"), else in this machine's zone
// (TZ, else /etc/localtime). The zone's file is read once (util/time_zone: TZif and its POSIX
// rule); nothing of the process changes (no TZ, no tzset), so readers on several threads
// convert at once. A repeated hour is placed by the log's own order, a skipped one refused
// (docs/logs.md, "Times and zones").
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/time_zone.hpp"

namespace gpuscope::ingest {

struct LocalDateTime {
  int year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  int hour = 0;
  int minute = 0;
  std::int64_t second_ns = 0;  // nanoseconds into the minute (seconds and fraction)
};

// The local times a log holds after the one being converted, in its order, each call the next
// (`restart`: the first of them again); nullopt at its end. What tells which pass of a repeated
// hour a log begins in.
using LaterTimes = std::function<std::optional<LocalDateTime>(bool restart)>;

class LocalZone {
 public:
  // `zone` as --timezone takes it; empty: this machine's zone (TZ, else /etc/localtime). Throws
  // Error::usage for a zone the system does not know (a missing tzdata named) and for a name
  // that is no zone name (a path: "../../etc/passwd").
  explicit LocalZone(std::string zone);

  // The time `local` stands for, in ns since the epoch; nullopt for a date that does not exist
  // (February 30) or lies outside the years 1970-2200. Times are expected in log order: in an
  // hour the clocks repeat, a time right after an earlier one of the log takes the reading that
  // keeps the log in order; the first time of a log inside that hour is placed by `later` (the
  // log going back by about an hour: the first pass; the log leaving the hour forward: the
  // second). Throws Error::usage (no file or line: the caller adds them) for a time the clocks
  // skipped and for a repeated time that cannot be placed.
  std::optional<std::int64_t> to_utc_ns(const LocalDateTime& local, const LaterTimes& later = {});

  // Seconds east of UTC at the instant `utc_ns`.
  std::int64_t offset_s_at(std::int64_t utc_ns) const;

  // "Europe/Zurich (--timezone)", "this machine's zone (Europe/Zurich)": for the note that says
  // which zone was assumed.
  std::string description() const;

 private:
  std::int64_t placed(const LocalDateTime& local, std::int64_t earlier_s, std::int64_t later_s,
                      const LaterTimes& later) const;
  std::optional<bool> first_pass_from(const LocalDateTime& local, const LaterTimes& later) const;

  std::string zone_;  // as given; empty: this machine's
  std::string name_;  // for messages: "Europe/Zurich", "+02:00"
  util::TimeZone rules_;
  std::int64_t cached_minute_ = -1;
  std::vector<std::int64_t> cached_utc_s_;  // the readings of the minute cached_minute_
  std::int64_t last_ns_ = 0;
  bool have_last_ = false;
};

// This machine's zone as a name ("Europe/Zurich", "UTC"): TZ when set, else the target of the
// /etc/localtime link; "unknown" when neither says.
std::string machine_zone_name();

}  // namespace gpuscope::ingest

namespace gpuscope::ingest {

// When a log without timestamps began (docs/logs.md): --log-start (a local time in the zone),
// else its last tick taken at the file's modification time, `ticks` ticks of `interval_ns`
// before; `notes` says which. Throws Error::usage for a --log-start that is no time.
std::int64_t timeless_start_ns(const std::filesystem::path& file, const std::string& start,
                               LocalZone& zone, std::size_t ticks, std::int64_t interval_ns,
                               std::vector<std::string>& notes);

}  // namespace gpuscope::ingest
