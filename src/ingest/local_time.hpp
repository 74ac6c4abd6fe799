// Local wall-clock times in logs (nvidia-smi prints "2026/11/25 22:40:11.719" in the machine's
// zone, without the zone) as UTC: in the zone the user names (--timezone: an IANA name from the
// system's time zone database, "UTC", or a fixed offset "+02:00"), else in this machine's zone,
// with daylight-saving changes handled (a repeated hour read in order). docs/logs.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::ingest {

struct LocalDateTime {
  int year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  int hour = 0;
  int minute = 0;
  std::int64_t second_ns = 0;  // nanoseconds into the minute (seconds and fraction)
};

class LocalZone {
 public:
  // `zone` as --timezone takes it; empty: this machine's zone (TZ, else /etc/localtime). Throws
  // Error::usage for a zone the system does not know (a missing tzdata named).
  explicit LocalZone(std::string zone);

  // The time `local` stands for, in ns since the epoch. Times are expected in log order: when a
  // time falls in the hour a daylight-saving change repeats, the reading that keeps the log in
  // order is taken. nullopt for a date that does not exist (February 30) or lies outside the
  // years 1970-2200 (nanoseconds since 1970 must fit in 64 bits).
  std::optional<std::int64_t> to_utc_ns(const LocalDateTime& local);

  // "Europe/Zurich (--timezone)", "this machine's zone (Europe/Zurich)": for the note that says
  // which zone was assumed.
  std::string description() const;

 private:
  std::optional<std::int64_t> minute_start(const LocalDateTime& local, int isdst);

  std::string zone_;      // as given; empty: this machine's
  std::string tz_value_;  // the TZ value to convert with; empty: the process's own
  std::optional<std::int64_t> fixed_offset_s_;
  std::int64_t cached_key_ = -1;
  std::int64_t cached_start_s_ = 0;
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
