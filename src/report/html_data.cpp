#include "report/html_data.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "report/analysis_view.hpp"
#include "report/gpu_grid.hpp"

namespace gpuscope::report {
namespace {

using nlohmann::json;

json metric_catalog() {
  json out = json::object();
  for (const auto& m : kMetrics) {
    if (!analyze::summarised(m.id)) continue;
    out[std::string(m.name)] = {{"unit", m.unit}, {"description", m.description}};
  }
  return out;
}

// What the report does not draw goes, and per-GPU summaries become arrays of arrays: a GPU's
// summaries in the order of `over_time_metrics`, each in the order of `over_time_fields` (their
// keys repeated for 1000 GPUs × 30 metrics would be most of the file); report.js expands them
// back. Past `full_summary_gpus` GPUs only the means are kept (the tables show nothing else).
constexpr const char* kSummaryFields[] = {"count", "mean", "median", "p5", "p95", "min", "max"};

void compact(json& data, std::size_t full_summary_gpus) {
  std::vector<std::string> fields;
  if (data["gpus"].size() <= full_summary_gpus) {
    fields.assign(std::begin(kSummaryFields), std::end(kSummaryFields));
  } else {
    fields = {"mean"};
  }
  for (auto& series : data["over_space"]) {
    series.erase("min_gpu");
    series.erase("max_gpu");
  }
  json metrics = json::array();
  if (!data["gpus"].empty()) {
    for (const auto& [name, summary] : data["gpus"].front()["over_time"].items()) {
      metrics.push_back(name);
    }
  }
  for (auto& gpu : data["gpus"]) {
    json rows = json::array();
    for (const auto& name : metrics) {
      const json& summary = gpu["over_time"][name.get<std::string>()];
      if (summary.is_null()) {
        rows.push_back(nullptr);
        continue;
      }
      json row = json::array();
      for (const auto& field : fields) row.push_back(summary[field]);
      rows.push_back(std::move(row));
    }
    gpu["over_time"] = std::move(rows);
  }
  data["over_time_metrics"] = std::move(metrics);
  data["over_time_fields"] = fields;
}

// The phase lane (docs/phases.md, "In the report"): the instances the analysis listed, as columns,
// times to the microsecond (round_numbers' 4 digits would merge a long run's phases).
json phase_lane(const analyze::PhaseReport& p) {
  json names = json::array();
  std::map<std::string, std::size_t> index;
  json start = json::array(), end = json::array(), name = json::array(), depth = json::array(),
       instance = json::array(), closed = json::array(), energy = json::array(),
       power = json::array(), sm = json::array(), tensor = json::array();
  const auto rounded = [](const std::optional<double>& v, int digits) {
    return v && std::isfinite(*v) ? json(std::stod(fmt::format("{:.{}g}", *v, digits)))
                                  : json(nullptr);
  };
  for (const auto& i : p.instances) {
    auto [it, added] = index.try_emplace(i.name, index.size());
    if (added) names.push_back(i.name);
    name.push_back(it->second);
    start.push_back(std::round(i.start_s * 1e6) / 1e6);
    end.push_back(std::round(i.end_s * 1e6) / 1e6);
    depth.push_back(i.depth);
    instance.push_back(i.instance);
    closed.push_back(i.closed ? 1 : 0);
    energy.push_back(rounded(i.figures.energy_j, 4));
    power.push_back(rounded(i.figures.mean_power_w, 4));
    sm.push_back(rounded(i.figures.metrics[0], 3));
    tensor.push_back(rounded(i.figures.metrics[1], 3));
  }
  json bins = nullptr;
  if (p.bins) {
    json rows = json::array();
    for (std::size_t r = 0; r < p.bins->busy_s.size(); ++r) {
      json busy = json::array();
      for (const double v : p.bins->busy_s[r]) busy.push_back(std::round(v * 1e6) / 1e6);
      json longest = json::array();
      for (const double v : p.bins->longest_s[r]) longest.push_back(std::round(v * 1e6) / 1e6);
      rows.push_back({{"busy_s", busy},
                      {"started", p.bins->started[r]},
                      {"longest_name", p.bins->longest_name[r]},
                      {"longest_s", longest}});
    }
    bins = {
        {"bin_s", p.bins->bin_s}, {"bins", p.bins->bins}, {"names", p.span_names}, {"rows", rows}};
  }
  return {{"mode", p.bins ? "bins" : "slices"},
          {"bins", bins},
          {"names", names},
          {"start_s", start},
          {"end_s", end},
          {"name", name},
          {"depth", depth},
          {"instance", instance},
          {"closed", closed},
          {"energy_j", energy},
          {"power_w", power},
          {"sm_active_pct", sm},
          {"tensor_active_pct", tensor},
          {"total", p.instance_count},
          {"shown", p.instances.size()}};
}

}  // namespace

void round_numbers(json& value, int digits) {
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (!std::isfinite(v)) {
      value = nullptr;
    } else if (v != 0) {
      value = std::stod(fmt::format("{:.{}g}", v, digits));
    }
  } else if (value.is_structured()) {
    for (auto& item : value) round_numbers(item, digits);
  }
}

std::string base64(std::span<const std::uint8_t> bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    // Widened before shifting: a byte promotes to int, and int shifts draw sign warnings.
    const std::uint32_t n = (std::uint32_t{bytes[i]} << 16U) | (std::uint32_t{bytes[i + 1]} << 8U) |
                            std::uint32_t{bytes[i + 2]};
    out += kAlphabet[(n >> 18U) & 63U];
    out += kAlphabet[(n >> 12U) & 63U];
    out += kAlphabet[(n >> 6U) & 63U];
    out += kAlphabet[n & 63U];
  }
  if (i < bytes.size()) {
    const bool two = i + 1 < bytes.size();
    const std::uint32_t n =
        (std::uint32_t{bytes[i]} << 16U) | (two ? std::uint32_t{bytes[i + 1]} << 8U : 0U);
    out += kAlphabet[(n >> 18U) & 63U];
    out += kAlphabet[(n >> 12U) & 63U];
    out += two ? kAlphabet[(n >> 6U) & 63U] : '=';
    out += '=';
  }
  return out;
}

std::string gzip(std::string_view text) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip wrapper, which the browser's DecompressionStream("gzip") reads.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw Error("cannot compress the report's data", "zlib's deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
  // zlib's interface is not const-correct; it does not write through next_in.
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) {
    throw Error("cannot compress the report's data", fmt::format("zlib's deflate said {}", result));
  }
  return out;
}

std::string json_for_script(const json& value) {
  const std::string text = json_text(value);
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

json html_report_data(const analyze::Analysis& a, const HtmlDataLimits& limits) {
  json data = analysis_json(a);
  // Wall-clock start of each run, for the metadata table (analysis_json has offsets only).
  for (std::size_t r = 0; r < a.runs.size() && r < data["runs"].size(); ++r) {
    data["runs"][r]["start_offset_s"] =
        static_cast<double>(a.runs[r].start_wall_ns - a.t0_wall_ns) / 1e9;
    data["runs"][r]["end_offset_s"] =
        a.runs[r].end_wall_ns > 0
            ? json(static_cast<double>(a.runs[r].end_wall_ns - a.t0_wall_ns) / 1e9)
            : json(nullptr);
  }
  data["t0_unix_s"] = static_cast<double>(a.t0_wall_ns) / 1e9;
  compact(data, limits.full_summary_gpus);
  round_numbers(data, 4);
  data["t0_unix_s"] = static_cast<double>(a.t0_wall_ns / 1000000) / 1e3;  // ms, unrounded
  // Times keep millisecond precision: four digits would merge the bins of a long run.
  for (const auto& m : kMetrics) {
    const auto& series = a.over_space[static_cast<std::size_t>(m.id)];
    if (series.empty() || !data["over_space"].contains(std::string(m.name))) continue;
    json t = json::array();
    for (const auto& p : series) t.push_back(std::round(p.t_s * 1000) / 1000);
    data["over_space"][std::string(m.name)]["t_s"] = std::move(t);
  }

  data["gpu_grid"] = gpu_grid_json(a, limits.grid);
  if (a.phases && !a.phases->instances.empty()) data["phase_lane"] = phase_lane(*a.phases);
  if (data.contains("phases") && data["phases"].is_object()) data["phases"].erase("instances");

  json marks = json::array();
  for (const auto& m : a.marks) {
    marks.push_back({{"t_s", std::round(m.t_s * 1000) / 1000},
                     {"kind", m.kind},
                     {"text", m.text},
                     {"where", m.where}});
  }
  data["marks"] = marks;
  data["metrics"] = metric_catalog();
  json order = json::array();  // JSON objects are sorted by name; the catalog's order reads better
  for (const auto& m : kMetrics) {
    if (analyze::summarised(m.id)) order.push_back(m.name);
  }
  data["metric_order"] = order;
  return data;
}

}  // namespace gpuscope::report
