#include "app/fleet/site_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/output_check.hpp"
#include "core/version.hpp"
#include "fleet/usage.hpp"
#include "util/output_file.hpp"

namespace gpuscope::app {

namespace {

constexpr std::size_t kTopGroups = 10;
constexpr std::size_t kTopJobs = 100;
constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kDayMs = 24 * kHourMs;
// Up to this long a period's report is drawn from its rows (an hourly heatmap); longer ones from
// the database's day sums.
constexpr std::int64_t kRowsSpan = 3 * kDayMs;

// The local days (or ISO weeks) of `period`, in order.
std::vector<std::string> periods_of(const Period& period, bool days) {
  std::vector<std::string> out;
  auto add = [&](std::int64_t t) {
    const std::string p = days ? fleet::local_day(t) : fleet::local_week(t);
    if (out.empty() || out.back() != p) out.push_back(p);
  };
  for (std::int64_t t = period.from_ms; t < period.to_ms; t += days ? kDayMs : 7 * kDayMs) add(t);
  add(period.to_ms - 1);
  return out;
}

// The groups with the most GPU-hours, then "others", each over the periods.
std::vector<report::GroupSeries> group_series(const std::vector<SiteJob>& jobs, UsageBy by,
                                              const std::vector<std::string>& periods,
                                              UsageBy period_by) {
  const auto totals = fleet::group_usage(jobs, by);
  std::map<std::string, std::size_t> index;
  std::vector<report::GroupSeries> out;
  for (const auto& row : totals) {
    if (out.size() == kTopGroups) break;
    index[row.group] = out.size();
    out.push_back(
        {row.group, std::vector<double>(periods.size()), std::vector<double>(periods.size())});
  }
  const bool others = totals.size() > kTopGroups;
  if (others)
    out.push_back(
        {"others", std::vector<double>(periods.size()), std::vector<double>(periods.size())});
  std::map<std::string, std::size_t> period_index;
  for (std::size_t i = 0; i < periods.size(); ++i) period_index[periods[i]] = i;
  for (const auto& job : jobs) {
    const auto p = period_index.find(fleet::usage_group(job, period_by));
    if (p == period_index.end()) continue;
    const auto g = index.find(fleet::usage_group(job, by));
    if (g == index.end() && !others) continue;
    auto& series = out[g == index.end() ? out.size() - 1 : g->second];
    series.gpu_hours[p->second] += job.gpu_hours;
    series.idle_gpu_hours[p->second] += job.idle_gpu_hours.value_or(0);
  }
  return out;
}

report::EfficiencyBands efficiency(const std::vector<SiteJob>& jobs) {
  report::EfficiencyBands bands;
  for (const auto& job : jobs) {
    if (!job.util_pct) {
      ++bands.jobs_unknown;
      continue;
    }
    const auto band = static_cast<std::size_t>(std::clamp(*job.util_pct / 10, 0.0, 9.0));
    bands.gpu_hours[band] += job.gpu_hours;
    ++bands.jobs[band];
  }
  return bands;
}

report::NodeHeatmap heatmap(const std::vector<SiteJob>& jobs, const Period& period) {
  report::NodeHeatmap map;
  const std::int64_t span = period.to_ms - period.from_ms;
  map.bin_ms = span <= 2 * kDayMs ? kHourMs / 4 : span <= 14 * kDayMs ? kHourMs : kDayMs;
  map.start_ms = period.from_ms;
  map.bins = static_cast<std::size_t>((span + map.bin_ms - 1) / map.bin_ms);
  std::map<std::string, std::set<std::string>> gpus_of;
  for (const auto& job : jobs) {
    for (const auto& g : job.gpu_rows) gpus_of[g.node].insert(g.key);
  }
  std::map<std::string, std::size_t> row;
  for (const auto& [node, gpus] : gpus_of) {
    row[node] = map.nodes.size();
    map.nodes.push_back(node);
  }
  std::vector<double> held(map.nodes.size() * map.bins), util(held.size());
  for (const auto& job : jobs) {
    for (const auto& g : job.gpu_rows) {
      if (!g.util_pct) continue;
      const std::size_t r = row[g.node];
      const std::int64_t a = std::max(job.start_ms, period.from_ms);
      const std::int64_t b = std::min(job.end_ms, period.to_ms);
      for (std::int64_t t = a; t < b;) {
        const auto bin = static_cast<std::size_t>((t - map.start_ms) / map.bin_ms);
        const std::int64_t bin_end = map.start_ms + static_cast<std::int64_t>(bin + 1) * map.bin_ms;
        const double seconds = static_cast<double>(std::min(b, bin_end) - t) / 1000;
        held[r * map.bins + bin] += seconds;
        util[r * map.bins + bin] += seconds * *g.util_pct;
        t = bin_end;
      }
    }
  }
  map.util_pct.resize(held.size());
  map.busy.resize(held.size());
  for (std::size_t i = 0; i < held.size(); ++i) {
    const double gpus = static_cast<double>(gpus_of[map.nodes[i / map.bins]].size());
    map.busy[i] = static_cast<float>(
        std::min(1.0, held[i] / (gpus * static_cast<double>(map.bin_ms) / 1000)));
    map.util_pct[i] = held[i] > 0 ? static_cast<float>(util[i] / held[i]) : std::nanf("");
  }
  return map;
}

// The groups with the most GPU-hours over the periods, then "others", from per-pair sums (a
// period, then the group: report/site_report.hpp's series).
std::vector<report::GroupSeries> pair_series(const std::vector<UsageRow>& totals,
                                             const std::vector<UsageRow>& pairs,
                                             const std::vector<std::string>& periods) {
  std::vector<UsageRow> ranked = totals;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const UsageRow& a, const UsageRow& b) { return a.gpu_hours > b.gpu_hours; });
  std::map<std::string, std::size_t> index;
  std::vector<report::GroupSeries> out;
  const std::size_t n = periods.size();
  for (const auto& row : ranked) {
    if (out.size() == kTopGroups) break;
    index[row.group] = out.size();
    out.push_back({row.group, std::vector<double>(n), std::vector<double>(n)});
  }
  if (ranked.size() > kTopGroups)
    out.push_back({"others", std::vector<double>(n), std::vector<double>(n)});
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < n; ++i) at[periods[i]] = i;
  for (const auto& pair : pairs) {
    const auto cut = pair.group.find('\x1f');
    const auto p = at.find(pair.group.substr(0, cut));
    if (cut == std::string::npos || p == at.end()) continue;
    std::string group = pair.group.substr(cut + 1);
    if (group.empty()) group = "(none)";
    const auto g = index.find(group);
    if (g == index.end() && ranked.size() <= kTopGroups) continue;
    auto& series = out[g == index.end() ? out.size() - 1 : g->second];
    series.gpu_hours[p->second] += pair.gpu_hours;
    series.idle_gpu_hours[p->second] += pair.idle_gpu_hours;
  }
  return out;
}

// Nodes × local days from the database's node_days.
report::NodeHeatmap day_heatmap(const std::vector<store::NodeDay>& days, const Period& period) {
  report::NodeHeatmap map;
  map.start_ms = period.from_ms;
  map.bin_ms = kDayMs;
  std::map<std::string, std::size_t> bin;
  for (std::int64_t t = period.from_ms; t < period.to_ms; t += kDayMs) {
    const std::string d = fleet::local_day(t);
    if (bin.count(d) == 0) bin.emplace(d, bin.size());
  }
  bin.try_emplace(fleet::local_day(period.to_ms - 1), bin.size());
  map.bins = bin.size();
  std::map<std::string, std::size_t> row;
  for (const auto& d : days) row.try_emplace(d.node, 0);
  for (auto& [node, r] : row) {
    r = map.nodes.size();
    map.nodes.push_back(node);
  }
  map.util_pct.assign(map.nodes.size() * map.bins, std::nanf(""));
  map.busy.assign(map.nodes.size() * map.bins, 0.0F);
  for (const auto& d : days) {
    const auto b = bin.find(d.day);
    if (b == bin.end() || d.held_gpu_s <= 0) continue;
    const std::size_t i = row[d.node] * map.bins + b->second;
    map.util_pct[i] = static_cast<float>(d.util_gpu_s / d.held_gpu_s);
    map.busy[i] =
        static_cast<float>(std::min(1.0, d.held_gpu_s / (std::max(1, d.gpus) * 86'400.0)));
  }
  return map;
}

report::SiteReportData site_data_of_sums(store::AccountingDb& db, const store::JobQuery& query,
                                         const Period& period) {
  report::SiteReportData data;
  data.from_ms = period.from_ms;
  data.to_ms = period.to_ms;
  data.totals = db.total(query);
  const bool days = period.to_ms - period.from_ms <= 62 * kDayMs;
  const UsageBy period_by = days ? UsageBy::Day : UsageBy::Week;
  data.periods = periods_of(period, days);
  data.users = db.usage(query, UsageBy::User);
  data.accounts = db.usage(query, UsageBy::Account);
  for (auto* rows : {&data.users, &data.accounts}) {
    std::stable_sort(rows->begin(), rows->end(), [](const UsageRow& a, const UsageRow& b) {
      return a.gpu_hours > b.gpu_hours;
    });
  }
  data.by_user = pair_series(data.users, db.usage(query, period_by, UsageBy::User), data.periods);
  data.by_account =
      pair_series(data.accounts, db.usage(query, period_by, UsageBy::Account), data.periods);
  store::JobQuery top = query;
  top.limit = kTopJobs;
  data.top_idle = db.jobs(top);
  const store::UtilizationBands bands = db.utilization_bands(query);
  data.efficiency.gpu_hours = bands.gpu_hours;
  data.efficiency.jobs = bands.jobs;
  data.efficiency.jobs_unknown = bands.unknown;
  data.heatmap = day_heatmap(db.node_days(query), period);
  return data;
}

int write(const JobsRun& o, report::SiteReportData data) {
  OutputCheck check;
  check.force = o.force;
  const std::filesystem::path output = check_output_file(o.output, check);
  data.generator = fmt::format("gpuscope {}", kVersion);
  const std::string html = report::site_report_html(data);
  write_output_file(output, html);
  fmt::print(stderr, "gpuscope: wrote {} ({:.1f} MB, {} jobs)\n", output.string(),
             static_cast<double>(html.size()) / 1e6, data.totals.jobs);
  return 0;
}

}  // namespace

report::SiteReportData site_data_of_rows(const std::vector<SiteJob>& jobs, const Period& period) {
  report::SiteReportData data;
  data.from_ms = period.from_ms;
  data.to_ms = period.to_ms;
  data.totals = fleet::usage_total(jobs);
  const bool days = period.to_ms - period.from_ms <= 62 * kDayMs;
  const UsageBy period_by = days ? UsageBy::Day : UsageBy::Week;
  for (std::int64_t t = period.from_ms; t < period.to_ms; t += days ? kDayMs : 7 * kDayMs) {
    const std::string p = days ? fleet::local_day(t) : fleet::local_week(t);
    if (data.periods.empty() || data.periods.back() != p) data.periods.push_back(p);
  }
  const std::string last =
      days ? fleet::local_day(period.to_ms - 1) : fleet::local_week(period.to_ms - 1);
  if (data.periods.empty() || data.periods.back() != last) data.periods.push_back(last);
  data.by_user = group_series(jobs, UsageBy::User, data.periods, period_by);
  data.by_account = group_series(jobs, UsageBy::Account, data.periods, period_by);
  data.users = fleet::group_usage(jobs, UsageBy::User);
  data.accounts = fleet::group_usage(jobs, UsageBy::Account);
  for (const auto& job : jobs) {  // the rows come most idle first
    if (data.top_idle.size() == kTopJobs) break;
    SiteJob shown = job;
    shown.gpu_rows.clear();
    data.top_idle.push_back(std::move(shown));
  }
  data.efficiency = efficiency(jobs);
  data.heatmap = heatmap(jobs, period);
  return data;
}

int write_site_report(const JobsRun& o, store::AccountingDb& db, const store::JobQuery& query,
                      const std::string& source) {
  const Period period{query.from_ms.value_or(0), query.to_ms.value_or(0)};
  report::SiteReportData data;
  if (period.to_ms - period.from_ms <= kRowsSpan) {  // a few days: from the rows, by the hour
    store::JobQuery all = query;
    all.gpu_rows = true;
    all.limit = 0;
    data = site_data_of_rows(db.jobs(all), period);
  } else {
    data = site_data_of_sums(db, query, period);
  }
  data.source = source;
  return write(o, std::move(data));
}

int write_site_report(const JobsRun& o, const std::vector<SiteJob>& jobs, const Period& period,
                      const std::string& source) {
  report::SiteReportData data = site_data_of_rows(jobs, period);
  data.source = source;
  return write(o, std::move(data));
}

}  // namespace gpuscope::app
