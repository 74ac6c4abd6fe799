#include "util/time_zone.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <optional>

namespace gpuscope::util {
namespace {

constexpr std::int64_t kDay = 86400;
// Offsets beyond a day are no zone's (RFC 8536 allows -89999..93599; real ones are within 15 h).
constexpr std::int64_t kMaxOffset = 26 * 3600;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0);
}

bool is_leap(std::int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned days_in_month(std::int64_t y, int m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// The year of a day counted from 1970-01-01.
std::int64_t year_of_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = floor_div(z, 146097);
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  return yoe + era * 400 + (mp >= 10 ? 1 : 0);
}

// The day (from 1970-01-01) a rule's date falls on in `year`.
std::int64_t rule_day(const TimeZone::RuleDate& d, std::int64_t year) {
  const std::int64_t jan1 = days_from_civil(year, 1, 1);
  if (d.kind == 'J') return jan1 + d.day - 1 + (is_leap(year) && d.day >= 60 ? 1 : 0);
  if (d.kind == 'D') return jan1 + d.day;
  const std::int64_t first = days_from_civil(year, static_cast<unsigned>(d.month), 1);
  const std::int64_t weekday_of_first = ((first + 4) % 7 + 7) % 7;  // 1970-01-01: a Thursday
  std::int64_t day = 1 + (d.day - weekday_of_first + 7) % 7 + (d.week - 1) * 7;
  while (day > days_in_month(year, d.month)) day -= 7;
  return first + day - 1;
}

// Reads a POSIX TZ rule left to right.
class RuleText {
 public:
  explicit RuleText(std::string_view text) : text_(text) {}
  bool done() const { return at_ == text_.size(); }
  bool take(char c) {
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }

  // "CET" (three or more letters) or "<+0330>" (letters, digits, signs).
  bool name() {
    if (take('<')) {
      const std::size_t start = at_;
      while (at_ < text_.size() && text_[at_] != '>') {
        const char c = text_[at_];
        if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-') return false;
        ++at_;
      }
      const std::size_t length = at_ - start;
      return take('>') && length >= 3;
    }
    const std::size_t start = at_;
    while (at_ < text_.size() && is_alpha(text_[at_])) ++at_;
    return at_ - start >= 3;
  }

  // [+-]hh[:mm[:ss]], hours up to `max_hours`: seconds.
  std::optional<std::int64_t> duration(std::int64_t max_hours) {
    const bool negative = take('-');
    if (!negative) take('+');
    const auto hours = number(3);
    if (!hours || *hours > max_hours) return std::nullopt;
    std::int64_t seconds = *hours * 3600;
    for (std::int64_t unit : {60, 1}) {
      if (!take(':')) break;
      const auto part = number(2);
      if (!part || *part > 59) return std::nullopt;
      seconds += *part * unit;
    }
    return negative ? -seconds : seconds;
  }

  // Jn, n or Mm.w.d, then an optional /time.
  std::optional<TimeZone::RuleDate> date() {
    TimeZone::RuleDate d;
    if (take('M')) {
      const std::int64_t m = number(2).value_or(-1);
      const std::int64_t w = take('.') ? number(1).value_or(-1) : -1;
      const std::int64_t wd = take('.') ? number(1).value_or(-1) : -1;
      if (m < 1 || m > 12 || w < 1 || w > 5 || wd < 0 || wd > 6) return std::nullopt;
      d.kind = 'M';
      d.month = static_cast<int>(m);
      d.week = static_cast<int>(w);
      d.day = static_cast<int>(wd);
    } else {
      d.kind = take('J') ? 'J' : 'D';
      const auto n = number(3);
      if (!n || (d.kind == 'J' && (*n < 1 || *n > 365)) || *n > 365) return std::nullopt;
      d.day = static_cast<int>(*n);
    }
    if (take('/')) {
      const auto time = duration(167);
      if (!time) return std::nullopt;
      d.time_s = *time;
    }
    return d;
  }

 private:
  static bool is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  std::optional<std::int64_t> number(std::size_t max_digits) {
    std::size_t digits = 0;
    std::int64_t value = 0;
    while (at_ < text_.size() && is_digit(text_[at_]) && digits < max_digits) {
      value = value * 10 + (text_[at_++] - '0');
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    return value;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

std::optional<TimeZone::Rule> parse_rule(std::string_view text) {
  RuleText in(text);
  TimeZone::Rule rule;
  if (!in.name()) return std::nullopt;
  const auto std_west = in.duration(24);
  if (!std_west) return std::nullopt;
  rule.std_offset_s = -*std_west;
  if (in.done()) return rule;
  if (!in.name()) return std::nullopt;
  rule.has_dst = true;
  rule.dst_offset_s = rule.std_offset_s + 3600;
  if (in.peek() != ',' && !in.done()) {
    const auto dst_west = in.duration(24);
    if (!dst_west) return std::nullopt;
    rule.dst_offset_s = -*dst_west;
  }
  if (in.done()) {  // no dates: the US rule, as the C library assumes
    rule.start = {'M', 0, 3, 2, 7200};
    rule.end = {'M', 0, 11, 1, 7200};
    return rule;
  }
  if (!in.take(',')) return std::nullopt;
  const auto start = in.date();
  if (!start || !in.take(',')) return std::nullopt;
  const auto end = in.date();
  if (!end || !in.done()) return std::nullopt;
  rule.start = *start;
  rule.end = *end;
  return rule;
}

// Big-endian fields of a TZif file, bounds checked.
class TzifBytes {
 public:
  explicit TzifBytes(std::string_view bytes) : bytes_(bytes) {}
  bool has(std::size_t n) const { return bytes_.size() - at_ >= n; }
  std::int64_t signed_field(std::size_t size) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < size; ++i) {
      value = value << 8 | static_cast<unsigned char>(bytes_[at_ + i]);
    }
    at_ += size;
    if (size == 4) return static_cast<std::int32_t>(static_cast<std::uint32_t>(value));
    return static_cast<std::int64_t>(value);
  }
  std::uint8_t byte() { return static_cast<unsigned char>(bytes_[at_++]); }
  void skip(std::size_t n) { at_ += n; }
  std::string_view rest() const { return bytes_.substr(at_); }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

struct TzifCounts {
  std::int64_t isut = 0, isstd = 0, leap = 0, time = 0, type = 0, chars = 0;
  std::size_t data_size(std::size_t time_size) const {
    return static_cast<std::size_t>(time * static_cast<std::int64_t>(time_size + 1) + type * 6 +
                                    chars + leap * static_cast<std::int64_t>(time_size + 4) +
                                    isstd + isut);
  }
};

tl::expected<TzifCounts, std::string> read_header(TzifBytes& in, char& version) {
  if (!in.has(44) || in.rest().substr(0, 4) != "TZif") {
    return tl::unexpected(std::string("not a TZif file (no \"TZif\" header)"));
  }
  in.skip(4);
  version = static_cast<char>(in.byte());
  in.skip(15);
  TzifCounts c;
  for (std::int64_t* field : {&c.isut, &c.isstd, &c.leap, &c.time, &c.type, &c.chars}) {
    *field = in.signed_field(4);
    if (*field < 0 || *field > 1'000'000) {
      return tl::unexpected(std::string("a TZif header with an impossible count"));
    }
  }
  return c;
}

}  // namespace

std::int64_t days_from_civil(std::int64_t y, unsigned month, unsigned day) {
  const auto m = static_cast<std::int64_t>(month), d = static_cast<std::int64_t>(day);
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = floor_div(y, 400);
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

TimeZone TimeZone::fixed(std::int64_t offset_s) {
  TimeZone zone;
  zone.offset_before_ = offset_s;
  zone.all_offsets_ = {offset_s};
  return zone;
}

tl::expected<TimeZone, std::string> TimeZone::from_posix(std::string_view text) {
  const auto rule = parse_rule(text);
  if (!rule || std::abs(rule->std_offset_s) > kMaxOffset ||
      std::abs(rule->dst_offset_s) > kMaxOffset) {
    return tl::unexpected("'" + std::string(text) + "' is no POSIX TZ rule");
  }
  TimeZone zone = fixed(rule->std_offset_s);
  zone.has_rule_ = true;
  zone.rule_ = *rule;
  if (rule->has_dst) zone.all_offsets_.push_back(rule->dst_offset_s);
  return zone;
}

tl::expected<TimeZone, std::string> TimeZone::from_tzif(std::string_view bytes) {
  TzifBytes in(bytes);
  char version = 0;
  auto counts = read_header(in, version);
  if (!counts) return tl::unexpected(counts.error());
  std::size_t time_size = 4;
  if (version != '\0') {  // version 2 and later: skip the 32-bit data to the 64-bit header
    if (!in.has(counts->data_size(4))) return tl::unexpected(std::string("a truncated TZif file"));
    in.skip(counts->data_size(4));
    counts = read_header(in, version);
    if (!counts) return tl::unexpected(counts.error());
    time_size = 8;
  }
  const TzifCounts& c = *counts;
  if (!in.has(c.data_size(time_size))) {
    return tl::unexpected(std::string("a truncated TZif file"));
  }
  if (c.type < 1) return tl::unexpected(std::string("a TZif file without time types"));
  if (c.leap > 0) {
    return tl::unexpected(
        std::string("a TZif file with leap seconds (a \"right/\" zone), which gpuscope does not "
                    "read"));
  }
  TimeZone zone;
  std::vector<std::size_t> type_of(static_cast<std::size_t>(c.time));
  for (std::int64_t i = 0; i < c.time; ++i) {
    const std::int64_t at = in.signed_field(time_size);
    if (!zone.transitions_.empty() && at <= zone.transitions_.back()) {
      return tl::unexpected(std::string("a TZif file whose transitions are out of order"));
    }
    zone.transitions_.push_back(at);
  }
  for (auto& type : type_of) type = in.byte();
  std::vector<std::int64_t> type_offsets;
  for (std::int64_t i = 0; i < c.type; ++i) {
    type_offsets.push_back(in.signed_field(4));
    in.skip(2);  // is_dst, the abbreviation's index
    if (std::abs(type_offsets.back()) > kMaxOffset) {
      return tl::unexpected(std::string("a TZif file with an impossible UTC offset"));
    }
  }
  for (const auto type : type_of) {
    if (type >= type_offsets.size()) {
      return tl::unexpected(std::string("a TZif file naming a time type it lacks"));
    }
    zone.offset_after_.push_back(type_offsets[type]);
  }
  in.skip(static_cast<std::size_t>(c.chars + c.isstd + c.isut));
  zone.offset_before_ = type_offsets[0];
  zone.all_offsets_ = type_offsets;
  if (time_size == 8) {
    const std::string_view rest = in.rest();
    const auto end = rest.size() >= 2 && rest[0] == '\n' ? rest.find('\n', 1) : rest.npos;
    if (end == rest.npos) return tl::unexpected(std::string("a TZif file without its footer"));
    if (end > 1) {
      const auto rule = from_posix(rest.substr(1, end - 1));
      if (!rule) return tl::unexpected("a TZif file whose footer " + rule.error());
      zone.has_rule_ = true;
      zone.rule_ = rule->rule_;
      zone.all_offsets_.insert(zone.all_offsets_.end(), rule->all_offsets_.begin(),
                               rule->all_offsets_.end());
    }
  }
  std::sort(zone.all_offsets_.begin(), zone.all_offsets_.end());
  zone.all_offsets_.erase(std::unique(zone.all_offsets_.begin(), zone.all_offsets_.end()),
                          zone.all_offsets_.end());
  return zone;
}

std::int64_t TimeZone::rule_offset(std::int64_t utc_s) const {
  if (!rule_.has_dst) return rule_.std_offset_s;
  const std::int64_t year = year_of_days(floor_div(utc_s + rule_.std_offset_s, kDay));
  const auto change = [&](const RuleDate& d, std::int64_t y, std::int64_t offset) {
    return rule_day(d, y) * kDay + d.time_s - offset;
  };
  // Summer time runs from its start in a year to the next end after it (the same year in the
  // north, the next one in the south).
  for (std::int64_t y = year - 1; y <= year + 1; ++y) {
    const std::int64_t start = change(rule_.start, y, rule_.std_offset_s);
    std::int64_t end = change(rule_.end, y, rule_.dst_offset_s);
    if (end <= start) end = change(rule_.end, y + 1, rule_.dst_offset_s);
    if (start <= utc_s && utc_s < end) return rule_.dst_offset_s;
  }
  return rule_.std_offset_s;
}

std::int64_t TimeZone::offset_at(std::int64_t utc_s) const {
  if (transitions_.empty()) return has_rule_ ? rule_offset(utc_s) : offset_before_;
  if (utc_s < transitions_.front()) return offset_before_;
  if (utc_s > transitions_.back() && has_rule_) return rule_offset(utc_s);
  const auto after = std::upper_bound(transitions_.begin(), transitions_.end(), utc_s);
  return offset_after_[static_cast<std::size_t>(after - transitions_.begin()) - 1];
}

std::vector<std::int64_t> TimeZone::utc_of_local(std::int64_t local_s) const {
  std::vector<std::int64_t> out;
  for (const std::int64_t offset : all_offsets_) {
    const std::int64_t utc = local_s - offset;
    if (offset_at(utc) == offset) out.push_back(utc);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gpuscope::util
