// `gpuscope jobs -o site.html`: the site report, one self-contained HTML file (no network needed
// to view it) over a period of the site's GPU jobs: totals, usage per user and account over
// time, the jobs with the most idle GPU-hours, the efficiency distribution, a heatmap of nodes ×
// time (what gpudash shows), each job with the command that gives its full report. Its data is
// aggregated by the caller (app/fleet, from the accounting database or the server), so a year
// of a 2,000-node site stays a few MB (docs/fleet.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/site_job.hpp"

namespace gpuscope::report {

// One group's use per period (a user's GPU-hours per week).
struct GroupSeries {
  std::string group;  // the user or account; "others" for the rest of the groups together
  std::vector<double> gpu_hours;       // one per SiteReportData::periods
  std::vector<double> idle_gpu_hours;  // ditto
};

// The GPU-hours and jobs per band of mean GPU utilization: band i is [10·i, 10·i + 10) %, the
// last one [90, 100] %.
struct EfficiencyBands {
  std::array<double, 10> gpu_hours{};
  std::array<std::int64_t, 10> jobs{};
  std::int64_t jobs_unknown = 0;  // jobs without a known utilization
};

// Nodes × time: each cell the mean utilization (%) of the node's GPUs over the bin, weighted
// by the time each job held them; NaN where no job held a GPU of the node.
struct NodeHeatmap {
  std::vector<std::string> nodes;  // sorted by name
  std::int64_t start_ms = 0;
  std::int64_t bin_ms = 0;
  std::size_t bins = 0;
  std::vector<float> util_pct;  // nodes.size() × bins, row by node
  // The share of each cell's time a job held the node's GPUs (0..1), same shape.
  std::vector<float> busy;
};

struct SiteReportData {
  std::string title;      // "GPU jobs of <cluster>"; empty: a default
  std::string generator;  // "gpuscope 1.12.0 (abc123)", shown in the footer
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  std::string
      source;       // "the accounting database /var/lib/gpuscope/jobs.db", "VictoriaMetrics at ..."
  UsageRow totals;  // group "all"
  std::vector<std::string> periods;     // "2026-11-28" (days) or "2026-W48" (weeks), in order
  std::vector<GroupSeries> by_user;     // the top users by GPU-hours, then "others"
  std::vector<GroupSeries> by_account;  // ditto for accounts
  std::vector<UsageRow> users;          // the whole period per user, most GPU-hours first
  std::vector<UsageRow> accounts;
  std::vector<SiteJob> top_idle;  // the jobs with the most idle GPU-hours (gpu_rows empty)
  EfficiencyBands efficiency;
  NodeHeatmap heatmap;
  // The command that gives a job's full report; "{id}" stands for its id.
  std::string job_command = "gpuscope job {id} -o {id}.html";
};

// The whole document.
std::string site_report_html(const SiteReportData& data);

}  // namespace gpuscope::report
