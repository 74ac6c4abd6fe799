#include "carbon/series_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "util/number_text.hpp"
#include "util/small_file.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::carbon {
namespace {

constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;  // 64 MiB: years of 5-min figures
constexpr double kMaxIntensity = 5000;                        // gCO2e/kWh: past any real grid
constexpr std::int64_t kNsPerS = 1'000'000'000;
// Times from 1970 to 2096 (Unix seconds 0 to 4e9): every grid's figures, and far from where
// nanoseconds since 1970 overflow an int64 (before 1678, after 2262).

const std::vector<std::string_view> kStartNames = {"start", "from", "timestamp", "datetime"};
const std::vector<std::string_view> kEndNames = {"end", "to"};
const std::vector<std::string_view> kIntensityNames = {"g_per_kwh", "intensity", "carbon_intensity",
                                                       "carbonIntensity"};

// A record as read: where it was (for messages) and its fields as text.
struct Record {
  std::string where;  // "line 4" or "record 3"
  std::optional<std::string> start, end, intensity;
};

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\"");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\"");
  return std::string(text.substr(first, last - first + 1));
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (true) {
    const auto comma = line.find(',', begin);
    out.push_back(
        trim(line.substr(begin, comma == std::string_view::npos ? comma : comma - begin)));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return out;
}

std::optional<std::size_t> column(const std::vector<std::string>& header,
                                  const std::vector<std::string_view>& names) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    for (auto name : names) {
      if (header[i] == name) return i;
    }
  }
  return std::nullopt;
}

std::string names_text(const std::vector<std::string_view>& names) {
  std::string out;
  for (auto name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::vector<Record> csv_records(std::string_view text, std::string_view name) {
  std::vector<Record> records;
  std::vector<std::string> header;
  std::optional<std::size_t> start, end, intensity;
  std::size_t line_number = 0;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    auto newline = text.find('\n', begin);
    if (newline == std::string_view::npos) newline = text.size();
    const std::string_view line = text.substr(begin, newline - begin);
    begin = newline + 1;
    ++line_number;
    if (trim(line).empty() || trim(line).front() == '#') continue;
    auto fields = split_csv(line);
    if (header.empty()) {
      header = std::move(fields);
      start = column(header, kStartNames);
      end = column(header, kEndNames);
      intensity = column(header, kIntensityNames);
      if (!start || !intensity) {
        throw Error::usage(
            fmt::format("{}: the header (line {}) names no {} column", name, line_number,
                        !start ? "start" : "intensity"),
            {},
            fmt::format("name the columns: a start ({}), optionally an end ({}), and the "
                        "intensity in gCO2e/kWh ({})",
                        names_text(kStartNames), names_text(kEndNames),
                        names_text(kIntensityNames)));
      }
      continue;
    }
    Record r;
    r.where = fmt::format("line {}", line_number);
    auto field = [&](std::optional<std::size_t> i) -> std::optional<std::string> {
      if (!i || *i >= fields.size() || fields[*i].empty()) return std::nullopt;
      return fields[*i];
    };
    r.start = field(start);
    r.end = field(end);
    r.intensity = field(intensity);
    records.push_back(std::move(r));
  }
  return records;
}

std::optional<std::string> json_text(const nlohmann::json& object,
                                     const std::vector<std::string_view>& names) {
  for (auto key : names) {
    auto it = object.find(std::string(key));
    if (it == object.end() || it->is_null()) continue;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number()) return it->dump();
  }
  return std::nullopt;
}

std::vector<Record> json_records(std::string_view text, std::string_view name) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error::usage(fmt::format("{} is not valid JSON", name), e.what(),
                       "give a JSON array of {\"start\", \"end\", \"g_per_kwh\"} objects, or CSV");
  }
  const nlohmann::json* list = &document;
  if (document.is_object() && document.contains("data")) list = &document["data"];
  if (!list->is_array()) {
    throw Error::usage(fmt::format("{}: expected an array of records", name), {},
                       "give [{\"start\": \"2026-11-25T13:00Z\", \"end\": \"2026-11-25T13:30Z\", "
                       "\"g_per_kwh\": 182}, ...]");
  }
  std::vector<Record> records;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const auto& item = (*list)[i];
    Record r;
    r.where = fmt::format("record {}", i + 1);
    if (!item.is_object()) {
      throw Error::usage(fmt::format("{}: {} is not an object", name, r.where));
    }
    r.start = json_text(item, kStartNames);
    r.end = json_text(item, kEndNames);
    r.intensity = json_text(item, kIntensityNames);
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace

IntensitySeries parse_series(std::string_view text, std::string_view name) {
  const auto first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string_view::npos && (text[first] == '[' || text[first] == '{');
  const std::vector<Record> records = json ? json_records(text, name) : csv_records(text, name);
  IntensitySeries series;
  series.source = fmt::format("file {}", name);
  struct Point {
    std::int64_t start;
    std::optional<std::int64_t> end;
    double g;
    std::string where;
  };
  std::vector<Point> points;
  for (const Record& r : records) {
    if (!r.start || !r.intensity) {
      throw Error::usage(
          fmt::format("{}: {} has no {}", name, r.where, !r.start ? "start time" : "intensity"));
    }
    const auto start = util::parse_utc_time(*r.start);
    if (!start) {
      throw Error::usage(fmt::format("{}: {}: '{}' is not a time", name, r.where, *r.start), {},
                         "use ISO 8601 with a zone (2026-11-25T13:30Z, …+01:00) or Unix seconds");
    }
    std::optional<std::int64_t> end;
    if (r.end) {
      end = util::parse_utc_time(*r.end);
      if (!end || *end <= *start) {
        throw Error::usage(
            fmt::format("{}: {}: end '{}' is not a time after the start", name, r.where, *r.end));
      }
    }
    const auto g = util::parse_finite_number(*r.intensity);
    if (!g || *g < 0 || *g > kMaxIntensity) {
      throw Error::usage(
          fmt::format("{}: {}: intensity '{}' is not a number of gCO2e/kWh from 0 to {}", name,
                      r.where, *r.intensity, kMaxIntensity));
    }
    points.push_back({*start, end, *g, r.where});
  }
  if (points.empty()) {
    throw Error::usage(fmt::format("{} holds no intensity figures", name), {},
                       "give at least one record");
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const Point& a, const Point& b) { return a.start < b.start; });
  for (std::size_t i = 0; i < points.size(); ++i) {
    IntensityPeriod p;
    p.start_wall_ns = points[i].start;
    if (points[i].end) {
      p.end_wall_ns = *points[i].end;
    } else if (i + 1 < points.size()) {
      p.end_wall_ns = points[i + 1].start;  // holds until the next reading
    } else if (i > 0) {
      p.end_wall_ns = p.start_wall_ns + (points[i].start - points[i - 1].start);
    } else {
      p.end_wall_ns = p.start_wall_ns + 3600 * kNsPerS;
    }
    if (p.end_wall_ns <= p.start_wall_ns) {
      throw Error::usage(
          fmt::format("{}: {} starts at the same time as the one before", name, points[i].where));
    }
    if (!series.periods.empty() && p.start_wall_ns < series.periods.back().end_wall_ns) {
      throw Error::usage(fmt::format("{}: {} overlaps the period before it", name, points[i].where),
                         {}, "give periods that do not overlap");
    }
    p.g_per_kwh = points[i].g;
    p.kind = IntensityKind::Given;
    series.periods.push_back(std::move(p));
  }
  return series;
}

IntensitySeries read_series_file(const std::filesystem::path& path) {
  auto text = util::read_small_file(path.string(), kMaxFileBytes);
  if (!text) {
    throw Error::usage(fmt::format("cannot read {}", path.string()), text.error().reason,
                       "give a CSV or JSON file of the grid's intensity (--carbon-series)");
  }
  return parse_series(*text, path.string());
}

}  // namespace gpuscope::carbon
