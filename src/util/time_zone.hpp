// A time zone's rules, read without touching the process's state (no TZ, no tzset, no
// localtime): the offsets of a TZif file (RFC 8536: version 1, 2, 3 and 4 files, the 64-bit
// table of version 2 and later) and the POSIX TZ rule of its footer ("CET-1CEST,M3.5.0,M10.5.0/3"),
// which holds after the table's last transition (a "slim" file ends its table early; a "fat" one
// in 2037). Safe to use from any number of threads: a TimeZone never changes once made.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace gpuscope::util {

class TimeZone {
 public:
  // A TZif file's bytes; the error says what is wrong with them.
  static tl::expected<TimeZone, std::string> from_tzif(std::string_view bytes);
  // A POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3", "<+0330>-3:30", "EST5EDT"; RFC 8536's
  // extensions: hours up to 167 in rule times); the error says what is wrong with it.
  static tl::expected<TimeZone, std::string> from_posix(std::string_view rule);
  // A fixed offset, seconds east of UTC.
  static TimeZone fixed(std::int64_t offset_s);

  // Seconds east of UTC in force at `utc_s` (seconds since 1970, UTC).
  std::int64_t offset_at(std::int64_t utc_s) const;

  // The instants (seconds since 1970, UTC, ascending) whose local wall clock reads `local_s`
  // (seconds since 1970-01-01 00:00 of the local calendar): one; two where the clocks were set
  // back (the earlier reading first); none where they skipped it.
  std::vector<std::int64_t> utc_of_local(std::int64_t local_s) const;

  // A POSIX TZ rule, parsed: standard time, and daylight-saving time between two dates.
  struct RuleDate {
    char kind = 'M';  // 'J': day 1-365 without Feb 29; 'D': day 0-365; 'M': month.week.weekday
    int day = 0;      // J and D: the day; M: the weekday (0 = Sunday)
    int month = 0;    // M: 1-12
    int week = 0;     // M: 1-5 (5: the last)
    std::int64_t time_s = 7200;  // local time of day of the change (may be negative or > 24 h)
  };
  struct Rule {
    std::int64_t std_offset_s = 0;  // east of UTC
    bool has_dst = false;
    std::int64_t dst_offset_s = 0;
    RuleDate start, end;  // start: in standard time; end: in daylight-saving time
  };

 private:
  TimeZone() = default;
  std::int64_t rule_offset(std::int64_t utc_s) const;

  std::vector<std::int64_t> transitions_;   // UTC seconds, ascending
  std::vector<std::int64_t> offset_after_;  // offset in force from each transition on
  std::int64_t offset_before_ = 0;          // before the first transition (time type 0)
  std::vector<std::int64_t> all_offsets_;   // every offset the zone uses, each once
  bool has_rule_ = false;                   // the rule holds after the last transition
  Rule rule_;
};

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day);

}  // namespace gpuscope::util
