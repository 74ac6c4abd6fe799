#include "ingest/monitoring/job_timeline.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "core/error.hpp"

namespace gpuscope::ingest {
namespace {

// The labels two series of one GPU and metric differ in (what changed at a restart).
std::string changed_labels(const tsdb::Labels& a, const tsdb::Labels& b) {
  std::string out;
  auto add = [&](const std::string& key) {
    if (out.find(key) != std::string::npos) return;
    if (!out.empty()) out += ", ";
    out += key;
  };
  for (const auto& [k, v] : a) {
    const auto it = b.find(k);
    if (it == b.end() || it->second != v) add(k);
  }
  for (const auto& [k, v] : b) {
    if (!a.contains(k)) add(k);
  }
  return out;
}

// The pieces of one metric of one GPU (series of successive exporter lives), in time order;
// a piece overlapping an earlier one (a second exporter or scrape job) is left out and said.
std::vector<const tsdb::Series*> join_pieces(std::vector<const tsdb::Series*> pieces,
                                             const JobGpu& gpu, Notes& notes) {
  std::erase_if(pieces, [](const tsdb::Series* s) { return s->points.empty(); });
  std::sort(pieces.begin(), pieces.end(), [](const auto* a, const auto* b) {
    return a->points.front().t_ms < b->points.front().t_ms;
  });
  std::vector<const tsdb::Series*> kept;
  for (const auto* piece : pieces) {
    if (!kept.empty()) {
      const auto* last = kept.back();
      const std::string changed = changed_labels(last->labels, piece->labels);
      if (piece->points.front().t_ms <= last->points.back().t_ms) {
        notes.once("overlap:" + gpu.node, gpu.node,
                   fmt::format("GPU {} on {} has two series at once that differ in {} (scraped "
                               "twice?): the first is read, the other left out",
                               gpu.key, gpu.node, changed));
        continue;
      }
      notes.once("restart:" + gpu.node, gpu.node,
                 fmt::format("exporter restarted on {} at {} (its series' labels changed: {}); "
                             "the pieces are joined per GPU",
                             gpu.node, utc_text(piece->points.front().t_ms), changed));
    }
    kept.push_back(piece);
  }
  return kept;
}

// The factor for a ratio-named series that may hold percent (DCGM 4.6's GPU_UTIL_RATIO).
double ratio_scale(const ExportedName& name, const std::vector<const tsdb::Series*>& pieces,
                   const JobGpu& gpu, Notes& notes) {
  if (!name.ratio_or_percent) return name.scale;
  for (const auto* s : pieces) {
    for (const auto& p : s->points) {
      if (std::isfinite(p.value) && p.value > 1.0) {
        notes.once("pct:" + std::string(name.name), gpu.node,
                   fmt::format("{} holds values above 1: read as percent (the DCGM 4.6 field "
                               "kept percent under this name), not as a 0-1 ratio",
                               name.name));
        return 1.0;
      }
    }
  }
  return name.scale;
}

// One metric's pieces as readings; counter resets are kept and said.
void add_readings(const ExportedName& name, const std::vector<const tsdb::Series*>& pieces,
                  const JobGpu& gpu, double interval_ms, Notes& notes, std::vector<Reading>& out) {
  const double scale = ratio_scale(name, pieces, gpu, notes);
  std::optional<double> previous;
  for (const auto* s : pieces) {
    for (const auto& p : s->points) {
      // NaN is a staleness marker (a series that ended), not a value; an infinity is a value,
      // left out and said where rows are written (ValueScreen).
      if (std::isnan(p.value) || !within(gpu.job_times, p.t_ms, interval_ms / 2)) continue;
      const double v = p.value * scale;
      if (name.counter && previous && v < *previous) {
        notes.once("reset:" + gpu.node + std::string(name.name), gpu.node,
                   fmt::format("the {} counter of GPU {} on {} went back at {} (exporter or "
                               "driver restarted): passed through, the analysis leaves that "
                               "interval out",
                               name.name, gpu.key, gpu.node, utc_text(p.t_ms)));
      }
      previous = v;
      out.push_back({p.t_ms, name.metric, v});
    }
  }
}

}  // namespace

double median_spacing_ms(const std::vector<tsdb::Series>& series) {
  std::vector<std::int64_t> deltas;
  for (const auto& s : series) {
    for (std::size_t i = 1; i < s.points.size(); ++i) {
      const auto d = s.points[i].t_ms - s.points[i - 1].t_ms;
      if (d > 0) deltas.push_back(d);
    }
  }
  if (deltas.empty()) return 0;
  const auto mid = deltas.begin() + static_cast<std::ptrdiff_t>(deltas.size() / 2);
  std::nth_element(deltas.begin(), mid, deltas.end());
  return static_cast<double>(*mid);
}

bool within(const std::vector<Span>& spans, std::int64_t t_ms, double slack_ms) {
  if (spans.empty()) return true;
  const auto t = static_cast<double>(t_ms);
  return std::any_of(spans.begin(), spans.end(), [&](const Span& s) {
    return t >= static_cast<double>(s.first) - slack_ms &&
           t <= static_cast<double>(s.second) + slack_ms;
  });
}

GpuTimeline raw_timeline(const JobGpu& gpu, const std::vector<tsdb::Series>& series,
                         double interval_ms, Notes& notes) {
  GpuTimeline out;
  std::map<const ExportedName*, std::vector<const tsdb::Series*>> by_name;
  for (const auto& s : series) {
    if (const ExportedName* name = exported_name(s.labels)) {
      by_name[name].push_back(&s);
    } else if (!s.points.empty()) {
      if (auto bytes = memory_total_bytes(s.name(), s.points.back().value)) {
        out.memory_total_bytes = bytes;
      }
    }
  }
  std::vector<Reading> readings;
  for (auto& [name, pieces] : by_name) {
    add_readings(*name, join_pieces(pieces, gpu, notes), gpu, interval_ms, notes, readings);
  }
  out.rows = group_rows(std::move(readings), interval_ms);
  for (const auto& row : out.rows) out.metrics |= row.present;
  return out;
}

std::vector<SampleRow> group_rows(std::vector<Reading> readings, double interval_ms) {
  std::stable_sort(readings.begin(), readings.end(),
                   [](const Reading& a, const Reading& b) { return a.t_ms < b.t_ms; });
  std::vector<SampleRow> rows;
  std::int64_t first = 0;
  for (const auto& r : readings) {
    const bool joins = !rows.empty() &&
                       !rows.back().present.test(static_cast<std::size_t>(r.metric)) &&
                       (r.t_ms == first || static_cast<double>(r.t_ms - first) < interval_ms / 2);
    if (!joins) {
      rows.emplace_back();
      first = r.t_ms;
      const auto ns = tsdb::ns_of_ms(r.t_ms);
      if (!ns) {
        throw Error(fmt::format("a sample of the monitoring database is stamped {} ms", r.t_ms),
                    "past 2262-04-11 (or before 1678), beyond what gpuscope's nanosecond times "
                    "hold: it cannot be the job's",
                    "check the server's samples of the job (a clock far off when they were "
                    "written)");
      }
      rows.back().wall_ns = *ns;
    }
    rows.back().set(r.metric, r.value);
  }
  return rows;
}

void say_gaps(const JobGpu& gpu, const std::vector<SampleRow>& rows, double interval_ms,
              Notes& notes) {
  if (interval_ms <= 0) return;
  std::size_t gaps = 0;
  std::int64_t longest = 0, at = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const std::int64_t d = (rows[i].wall_ns - rows[i - 1].wall_ns) / 1'000'000;
    if (static_cast<double>(d) <= 2.5 * interval_ms) continue;
    ++gaps;
    if (d > longest) longest = d, at = rows[i - 1].wall_ns / 1'000'000;
  }
  if (gaps == 0) return;
  notes.once("gap:" + gpu.node, gpu.node,
             fmt::format("the series of {} have {} gap{} (no scrape), the longest {} from {}: "
                         "left as gaps, nothing interpolated",
                         gpu.node, gaps, gaps == 1 ? "" : "s",
                         duration_text(static_cast<double>(longest) / 1e3), utc_text(at)));
}

std::string utc_text(std::int64_t t_ms) {
  const std::chrono::sys_seconds t{std::chrono::seconds(t_ms / 1000)};
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", t);
}

std::string duration_text(double s) {
  if (s < 1) return fmt::format("{:g} s", std::round(s * 1000) / 1000);  // 0.25 s, not 0.3 s
  if (s < 60) return fmt::format("{:g} s", std::round(s * 10) / 10);
  if (s < 3600) {
    const auto m = static_cast<long>(s / 60), rest = std::lround(s - 60.0 * static_cast<double>(m));
    return rest == 0 ? fmt::format("{} min", m) : fmt::format("{} min {} s", m, rest);
  }
  if (s < 86400 * 2) {
    const auto h = static_cast<long>(s / 3600);
    const auto m = std::lround((s - 3600.0 * static_cast<double>(h)) / 60);
    return m == 0 ? fmt::format("{} h", h) : fmt::format("{} h {} min", h, m);
  }
  return fmt::format("{:g} days", std::round(s / 86400 * 10) / 10);
}

}  // namespace gpuscope::ingest
