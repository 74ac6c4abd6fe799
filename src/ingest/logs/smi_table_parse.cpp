#include "ingest/logs/smi_table_parse.hpp"

#include <fmt/format.h>

#include <array>

#include "ingest/logs/log_text.hpp"
#include "util/number_text.hpp"

namespace gpuscope::ingest::smi_table {
namespace {

constexpr std::array<std::string_view, 7> kWeekdays = {"Thu", "Fri", "Sat", "Sun",
                                                       "Mon", "Tue", "Wed"};  // from 1970-01-01
constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
std::int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  return static_cast<std::int64_t>(era) * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

int days_in_month(int y, int m) {
  constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[static_cast<std::size_t>(m - 1)];
}

// "22:40:11" as hours, minutes, seconds.
bool clock_of(std::string_view text, LocalDateTime& t) {
  if (text.size() != 8 || text[2] != ':' || text[5] != ':') return false;
  const auto h = util::parse_unsigned(text.substr(0, 2));
  const auto m = util::parse_unsigned(text.substr(3, 2));
  const auto s = util::parse_unsigned(text.substr(6, 2));
  if (!h || !m || !s || *h > 23 || *m > 59 || *s > 60) return false;
  t.hour = static_cast<int>(*h);
  t.minute = static_cast<int>(*m);
  t.second_ns = static_cast<std::int64_t>(*s) * 1'000'000'000;
  return true;
}

// The words nvidia-smi prints where a value is missing.
bool is_absent_word(std::string_view text) {
  return text == "N/A" || text == "ERR!" || text == "Not Supported" || text == "[N/A]" ||
         text == "Unknown" || text == "Off" || text == "-";
}

// `token` as a number followed by `unit` ("42C", "6493MiB"), or a word for none.
bool read_value(std::string_view token, std::string_view unit, Reading& out) {
  out = {};
  if (is_absent_word(token)) {
    out.absent = std::string(token);
    return true;
  }
  if (token.size() <= unit.size() || token.substr(token.size() - unit.size()) != unit) {
    return false;
  }
  out.value = util::parse_finite_number(token.substr(0, token.size() - unit.size()));
  return out.value.has_value();
}

// The text of `whole` from the start of `from` to the end of `to` (views into it), trimmed.
std::string_view span(std::string_view whole, std::string_view from, std::string_view to) {
  const auto begin = static_cast<std::size_t>(from.data() - whole.data());
  const auto end = static_cast<std::size_t>(to.data() + to.size() - whole.data());
  return trim(whole.substr(begin, end - begin));
}

constexpr unsigned long long kNoIndex = ~0ULL;

bool first_row(const std::vector<std::string>& cells, GpuBlock& g, std::string& why) {
  std::vector<std::string_view> words;
  split_blanks(cells[0], words);
  const unsigned long long index =
      words.size() < 3 ? kNoIndex : util::parse_unsigned(words[0]).value_or(kNoIndex);
  if (index > 1023) {
    why = fmt::format("'{}' is no GPU index, name and persistence mode", cells[0]);
    return false;
  }
  g.index = static_cast<unsigned>(index);
  g.name = std::string(span(cells[0], words[1], words[words.size() - 2]));
  g.name_cut = g.name.size() > 3 && g.name.substr(g.name.size() - 3) == "...";
  g.persistence = std::string(words.back());
  split_blanks(cells[1], words);
  if (words.size() != 2 || words[0].find(':') == std::string_view::npos) {
    why = fmt::format("'{}' is no bus id and display state", cells[1]);
    return false;
  }
  g.bus_id = std::string(words[0]);
  g.display_active = std::string(words[1]);
  const std::string_view ecc = trim(cells[2]);
  if (!read_value(ecc, "", g.ecc_uncorrected) && !is_absent_word(ecc)) {
    why = fmt::format("'{}' is no count of uncorrected ECC errors", ecc);
    return false;
  }
  return true;
}

bool second_row(const std::vector<std::string>& cells, GpuBlock& g, std::string& why) {
  std::vector<std::string_view> words;
  split_blanks(cells[0], words);
  if (words.size() != 6 || words[4] != "/" || !read_value(words[0], "%", g.fan_pct) ||
      !read_value(words[1], "C", g.temperature_c) || !read_value(words[3], "W", g.power_w) ||
      !read_value(words[5], "W", g.power_cap_w)) {
    why = fmt::format("'{}' is no fan, temperature, performance state and power / cap", cells[0]);
    return false;
  }
  g.perf = std::string(words[2]);
  const std::string_view memory = trim(cells[1]);
  split_blanks(memory, words);
  if (words.size() == 3 && words[1] == "/") {
    if (!read_value(words[0], "MiB", g.memory_used_mib) ||
        !read_value(words[2], "MiB", g.memory_total_mib)) {
      why = fmt::format("'{}' is no memory used / total", memory);
      return false;
    }
  } else if (is_absent_word(memory)) {
    g.memory_used_mib.absent = g.memory_total_mib.absent = std::string(memory);
  } else {
    why = fmt::format("'{}' is no memory used / total", memory);
    return false;
  }
  split_blanks(cells[2], words);
  if (words.size() < 2 || !read_value(words[0], "%", g.gpu_util_pct)) {
    why = fmt::format("'{}' is no GPU utilization and compute mode", cells[2]);
    return false;
  }
  g.compute_mode = std::string(span(cells[2], words[1], words.back()));
  return true;
}

}  // namespace

std::string_view clean_line(std::string_view line, std::string& scratch) {
  if (line.find('\x1b') == std::string_view::npos && line.find('\r') == std::string_view::npos) {
    return trim(line);
  }
  scratch.clear();
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\r') continue;
    if (c != '\x1b') {
      scratch += c;
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '[') {  // CSI: parameters, then a final byte
      i += 2;
      while (i < line.size() && (static_cast<unsigned char>(line[i]) < 0x40 ||
                                 static_cast<unsigned char>(line[i]) > 0x7e)) {
        ++i;
      }
    } else {
      ++i;  // ESC and one character ("ESC (B", charset choices, take the '(' alone)
    }
  }
  return trim(scratch);
}

std::optional<LocalDateTime> parse_date_line(std::string_view text) {
  std::vector<std::string_view> words;
  split_blanks(text, words);
  if (words.size() != 5) return std::nullopt;
  LocalDateTime t;
  std::size_t month = 0;
  while (month < kMonths.size() && kMonths[month] != words[1]) ++month;
  const auto day = util::parse_unsigned(words[2]);
  const auto year = words[4].size() == 4 ? util::parse_unsigned(words[4]) : std::nullopt;
  if (month == kMonths.size() || !day || !year || *year < 1970 || !clock_of(words[3], t)) {
    return std::nullopt;
  }
  t.year = static_cast<int>(*year);
  t.month = static_cast<int>(month) + 1;
  if (*day < 1 || *day > static_cast<unsigned>(days_in_month(t.year, t.month))) {
    return std::nullopt;
  }
  t.day = static_cast<int>(*day);
  const std::int64_t days = days_from_civil(t.year, t.month, t.day);
  if (kWeekdays[static_cast<std::size_t>(days % 7)] != words[0]) return std::nullopt;
  return t;
}

std::optional<std::string> parse_watch_header(std::string_view text) {
  std::vector<std::string_view> words;
  split_blanks(text, words);
  // procps-ng 4 adds how long the command took: "... 2026 in 0.051s (0)".
  if (words.size() > 3 && words[words.size() - 3] == "in" && words.back().front() == '(') {
    words.resize(words.size() - 3);
  }
  if (words.size() < 7 || words[0] != "Every" || words[1].size() < 3 ||
      words[1].substr(words[1].size() - 2) != "s:") {
    return std::nullopt;
  }
  const std::size_t date_at = words.size() - 5;
  if (!parse_date_line(span(text, words[date_at], words.back()))) return std::nullopt;
  const std::string_view host = words[date_at - 1];
  if (date_at >= 4 && host.size() > 1 && host.back() == ':') {
    return std::string(host.substr(0, host.size() - 1));
  }
  return std::string();
}

bool is_rule(std::string_view text) {
  if (text.size() < 3 || (text.front() != '+' && text.front() != '|')) return false;
  return text.find_first_not_of("+-=|") == std::string_view::npos &&
         text.find_first_of("-=") != std::string_view::npos;
}

bool split_row(std::string_view text, std::vector<std::string_view>& cells) {
  cells.clear();
  if (text.size() < 2 || text.front() != '|' || text.back() != '|') return false;
  split_fields(text.substr(1, text.size() - 2), '|', cells);
  return true;
}

std::optional<Banner> parse_banner(std::string_view cell) {
  std::vector<std::string_view> words;
  split_blanks(cell, words);
  if (words.size() < 2 || words[0] != "NVIDIA-SMI") return std::nullopt;
  Banner b;
  b.smi_version = std::string(words[1]);
  for (std::size_t i = 2; i + 2 < words.size(); ++i) {
    if (words[i + 1] != "Version:") continue;
    if (words[i] == "Driver") b.driver_version = std::string(words[i + 2]);
    if (words[i] == "CUDA" && words[i + 2] != "N/A") b.cuda_version = std::string(words[i + 2]);
  }
  if (b.driver_version.empty()) return std::nullopt;
  return b;
}

std::optional<GpuBlock> parse_gpu_block(const std::vector<std::vector<std::string>>& rows,
                                        std::string& why) {
  if (rows.size() < 2 || rows.size() > 3) {
    why = fmt::format("a GPU's block of {} rows (nvidia-smi prints 2 or 3)", rows.size());
    return std::nullopt;
  }
  for (const auto& row : rows) {
    if (row.size() != 3) {
      why = fmt::format("a row of {} cells in a GPU's block (nvidia-smi prints 3)", row.size());
      return std::nullopt;
    }
  }
  GpuBlock g;
  if (!first_row(rows[0], g, why) || !second_row(rows[1], g, why)) return std::nullopt;
  if (rows.size() == 3) g.mig_mode = rows[2][2];
  return g;
}

std::optional<ProcessRow> parse_process_row(std::string_view cell, bool gi_ci, std::string& why) {
  std::vector<std::string_view> words;
  split_blanks(cell, words);
  const std::size_t pid_at = gi_ci ? 3 : 1;
  const auto bad = [&] {
    why = fmt::format("'{}' is no process row (GPU,{} PID, type, name, memory)", cell,
                      gi_ci ? " GI, CI," : "");
    return std::nullopt;
  };
  if (words.size() < pid_at + 4) return bad();
  ProcessRow p;
  const auto gpu = util::parse_unsigned(words[0]);
  const auto pid = util::parse_unsigned(words[pid_at]);
  if (!gpu || *gpu > 1023 || !pid || *pid > 0xffffffffULL) return bad();
  p.gpu = static_cast<unsigned>(*gpu);
  p.pid = static_cast<unsigned>(*pid);
  if (gi_ci) {
    for (std::size_t i : {std::size_t{1}, std::size_t{2}}) {
      if (words[i] == "N/A") continue;
      const auto id = util::parse_unsigned(words[i]);
      if (!id || *id > 1023) return bad();
      (i == 1 ? p.gi : p.ci) = static_cast<unsigned>(*id);
    }
  }
  p.type = std::string(words[pid_at + 1]);
  if (p.type.find_first_not_of("CGM+") != std::string::npos) return bad();
  p.name = std::string(span(cell, words[pid_at + 2], words[words.size() - 2]));
  if (!read_value(words.back(), "MiB", p.memory_mib)) return bad();
  return p;
}

}  // namespace gpuscope::ingest::smi_table
