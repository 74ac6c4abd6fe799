// Synthetic site report data for the site report's tests: a small site whose figures the tests
// know (hostile names included), and a year of a big one (2,000 nodes × 365 days) to measure.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "report/site_report.hpp"

namespace gpuscope::report::testing {

// A name a site really has: quotes, markup, an ampersand, spaces and non-ASCII.
inline const std::string kHostileName = "train \"big\" <model> & </script><b>x</b> ünïcode 名前";
inline const std::string kHostileUser = "o'brien <ü>";
inline constexpr std::int64_t kDayMs = 86400000;
inline constexpr std::int64_t kSmallStartMs = 1764547200000;  // 2025-12-01 00:00 UTC

inline GroupSeries series(std::string group, std::size_t periods, double scale) {
  GroupSeries s{std::move(group), {}, {}};
  for (std::size_t i = 0; i < periods; ++i) {
    s.gpu_hours.push_back(scale * static_cast<double>(1 + (i % 3)));
    s.idle_gpu_hours.push_back(scale * 0.25 * static_cast<double>(i % 2));
  }
  return s;
}

inline SiteJob top_job(std::string id, std::string name, std::string user, double idle_hours) {
  SiteJob j;
  j.id = id;
  j.shown_id = id;
  j.name = std::move(name);
  j.user = std::move(user);
  j.account = "physics";
  j.partition = "gpu";
  j.state = "COMPLETED";
  j.exit_code = 0;
  j.start_ms = kSmallStartMs;
  j.end_ms = kSmallStartMs + 3600000;
  j.nodes = {"gpu-001", "gpu-002", "gpu-003"};
  j.gpus = 8;
  j.gpu_hours = idle_hours * 2;
  j.idle_gpu_hours = idle_hours;
  j.util_pct = 12.5;
  j.energy_j = 7.2e6;
  j.flags = {JobFlag::IdleGpus, JobFlag::GpuTooLarge};
  j.source = JobSource::Tsdb;
  return j;
}

// The small site: 7 days, 3 users (one hostile), 6 nodes. Its heatmap's cell (node 0, day 0) is
// busy at 75 % utilization; (node 1, day 0) is blank; the top jobs are 1001 (hostile name),
// 1002, 1003 in that order.
inline SiteReportData small_site() {
  SiteReportData d;
  d.title = "GPU jobs of \"test\" <cluster>";
  d.generator = "site_report_fixture";
  d.from_ms = kSmallStartMs;
  d.to_ms = kSmallStartMs + 7 * kDayMs;
  d.source = "the accounting database /var/lib/gpuscope/jobs.db";
  d.totals = {"all", 42, 1234.5, 234.56, 567.8 * 3.6e6, 98765.4, 43.21, 38.0, 0.41, 3, 5};
  for (int i = 0; i < 7; ++i) d.periods.push_back(fmt::format("2025-12-0{}", i + 1));
  d.by_user = {series("alice", 7, 10), series(kHostileUser, 7, 5), series("others", 7, 2)};
  d.by_account = {series("physics", 7, 12), series("chem & bio", 7, 4)};
  d.users = {{"alice", 20, 800, 100, 3e8, 50000, 55.0, 50.0, 0.5, 0, 2},
             {kHostileUser, 15, 300, 120, 1e8, 30000, 20.0, std::nullopt, std::nullopt, 3, 3},
             {"bob", 7, 134.5, 14.56, 4.4e7, 18765.4, 61.0, 58.0, 0.6, 0, 0}};
  d.accounts = {{"physics", 30, 1000, 200, 4e8, 80000, 45.0, 40.0, 0.45, 3, 4},
                {"chem & bio", 12, 234.5, 34.56, 4.4e7, 18765.4, 35.0, 30.0, 0.3, 0, 1}};
  d.top_idle = {top_job("1001", kHostileName, kHostileUser, 90),
                top_job("1002", "eval", "alice", 40), top_job("1003", "prep data", "bob", 12.5)};
  d.top_idle[2].flags = {JobFlag::Straggler};
  d.top_idle[2].util_pct = std::nullopt;
  d.efficiency.gpu_hours = {100, 50, 40, 30, 20, 200, 300, 250, 150, 94.5};
  d.efficiency.jobs = {5, 3, 2, 4, 1, 6, 7, 8, 3, 1};
  d.efficiency.jobs_unknown = 2;
  NodeHeatmap& h = d.heatmap;
  h.nodes = {"gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-005", "gpu-006"};
  h.start_ms = kSmallStartMs;
  h.bin_ms = kDayMs;
  h.bins = 7;
  for (std::size_t n = 0; n < h.nodes.size(); ++n) {
    for (std::size_t b = 0; b < h.bins; ++b) {
      const bool busy = (n + b) % 4 != 1;
      h.util_pct.push_back(busy ? static_cast<float>(15 * ((n + 2 * b) % 7)) : NAN);
      h.busy.push_back(busy ? 1.0F : 0.0F);
    }
  }
  h.util_pct[0] = 75;
  return d;
}

// A year of a big site: `nodes` nodes × 365 daily bins, each node running jobs of 1 to 10 days
// (each day's utilization within 10 points of the job's level) with gaps; 53 weeks of usage for 50
// users (the top 10 and "others"), 12 accounts, `jobs` top jobs. Deterministic (a fixed seed).
inline SiteReportData big_site(std::size_t nodes = 2000, std::size_t jobs = 100) {
  std::mt19937 random(48);
  const auto pick = [&random](std::uint32_t n) { return static_cast<std::uint32_t>(random() % n); };
  SiteReportData d;
  d.title = "GPU jobs of a year of a 2,000-node site";
  d.generator = "site_report_fixture";
  d.from_ms = 1735689600000;  // 2025-01-01
  d.to_ms = d.from_ms + 365 * kDayMs;
  d.source = "synthetic data";
  for (int w = 1; w <= 53; ++w) d.periods.push_back(fmt::format("2025-W{:02}", w));
  for (int u = 0; u < 50; ++u) {
    const std::string name = fmt::format("user{:02}", u);
    const double hours = 100000.0 / (1 + u);
    d.users.push_back({name, 1000 - 10 * u, hours, hours / 4, hours * 2.5e6, hours * 300, 40.0,
                       35.0, 0.4, u % 3, u % 7});
    if (u < 10) d.by_user.push_back(series(name, 53, hours / 53));
  }
  d.by_user.push_back(series("others", 53, 300));
  for (int a = 0; a < 12; ++a) {
    const std::string name = fmt::format("account-{}", a);
    const double hours = 300000.0 / (1 + a);
    d.accounts.push_back(
        {name, 5000, hours, hours / 5, hours * 2.5e6, hours * 300, 42.0, 37.0, 0.42, 0, 10});
    d.by_account.push_back(series(name, 53, hours / 53));
  }
  d.totals = {"all", 700000, 8.76e6, 1.9e6, 2.2e13, 2.6e9, 41.5, 36.2, 0.41, 1200, 90000};
  for (std::size_t j = 0; j < jobs; ++j) {
    d.top_idle.push_back(
        top_job(fmt::format("{}", 500000 + j), fmt::format("job {} of the year", j),
                fmt::format("user{:02}", j % 50), 5000.0 - 40.0 * static_cast<double>(j)));
  }
  d.top_idle[0].name = kHostileName;
  for (std::size_t b = 0; b < 10; ++b) {
    d.efficiency.gpu_hours[b] = 1e5 * static_cast<double>(1 + b % 4);
    d.efficiency.jobs[b] = 10000 * static_cast<std::int64_t>(1 + b % 3);
  }
  NodeHeatmap& h = d.heatmap;
  h.start_ms = d.from_ms;
  h.bin_ms = kDayMs;
  h.bins = 365;
  for (std::size_t n = 0; n < nodes; ++n) h.nodes.push_back(fmt::format("nid{:06}", n + 1));
  h.util_pct.reserve(nodes * h.bins);
  h.busy.reserve(nodes * h.bins);
  for (std::size_t n = 0; n < nodes; ++n) {
    for (std::size_t b = 0; b < h.bins;) {
      const std::size_t length = std::min<std::size_t>(1 + pick(10), h.bins - b);
      const bool idle = pick(5) == 0;
      const int util = static_cast<int>(pick(101));
      for (std::size_t k = 0; k < length; ++k, ++b) {
        // A job's daily mean wanders around its own level, as real ones do.
        const int day = std::clamp(util + static_cast<int>(pick(21)) - 10, 0, 100);
        h.util_pct.push_back(idle ? std::numeric_limits<float>::quiet_NaN()
                                  : static_cast<float>(day));
        h.busy.push_back(idle ? 0.0F : (k == 0 ? 0.5F : 1.0F));
      }
    }
  }
  // Known cells for the browser test: (node 0, day 0) busy at 75 %, (node 1, day 0) blank.
  h.util_pct[0] = 75;
  h.busy[0] = 1;
  h.util_pct[h.bins] = std::numeric_limits<float>::quiet_NaN();
  h.busy[h.bins] = 0;
  return d;
}

}  // namespace gpuscope::report::testing
