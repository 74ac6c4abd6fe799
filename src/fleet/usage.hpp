// `gpuscope usage`: jobs summed per user, account, partition, GPU model, day or week (CEEMS'
// and XDMoD's tables), from rows in memory (what the server gave) or as the accounting
// database's queries add them up: one definition of each sum (docs/fleet.md).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/site_job.hpp"

namespace gpuscope::fleet {

// "user", "account", "partition", "gpu-model", "day", "week"; nullopt for another word.
std::optional<UsageBy> parse_usage_by(std::string_view word);
std::string_view usage_by_word(UsageBy by);

// The group a job falls in: its user, ...; a day or ISO week of its end in the local time zone
// (2026-11-28, 2026-W48); "(none)" for an empty field.
std::string usage_group(const SiteJob& job, UsageBy by);
// A time's day or ISO week in the local time zone.
std::string local_day(std::int64_t ms);
std::string local_week(std::int64_t ms);

// Adds `job` to `row`: counts, sums, and the GPU-hours-weighted means' running sums.
class UsageSum {
 public:
  void add(const SiteJob& job);
  UsageRow row(std::string group) const;

 private:
  UsageRow sum_;
  double util_weight_ = 0, util_sum_ = 0;
  double sm_weight_ = 0, sm_sum_ = 0;
  double score_weight_ = 0, score_sum_ = 0;
};

// The rows per group, most GPU-hours first (days and weeks in time order).
std::vector<UsageRow> group_usage(std::span<const SiteJob> jobs, UsageBy by);

// All jobs as one row, group "all".
UsageRow usage_total(std::span<const SiteJob> jobs);

}  // namespace gpuscope::fleet
