#include "fleet/usage.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "util/local_time.hpp"

namespace gpuscope::fleet {

namespace {

constexpr std::array<std::string_view, 6> kByWords = {"user",      "account", "partition",
                                                      "gpu-model", "day",     "week"};

std::string or_none(const std::string& text) {
  return text.empty() ? "(none)" : text;
}

}  // namespace

std::optional<UsageBy> parse_usage_by(std::string_view word) {
  for (std::size_t i = 0; i < kByWords.size(); ++i) {
    if (kByWords[i] == word) return static_cast<UsageBy>(i);
  }
  return std::nullopt;
}

std::string_view usage_by_word(UsageBy by) {
  return kByWords[static_cast<std::size_t>(by)];
}

std::string local_day(std::int64_t ms) {
  return util::local_text(ms, "%Y-%m-%d");
}

std::string local_week(std::int64_t ms) {
  return util::local_text(ms, "%G-W%V");
}

std::string usage_group(const SiteJob& job, UsageBy by) {
  switch (by) {
    case UsageBy::User:
      return or_none(job.user);
    case UsageBy::Account:
      return or_none(job.account);
    case UsageBy::Partition:
      return or_none(job.partition);
    case UsageBy::GpuModel:
      return or_none(job.gpu_model);
    case UsageBy::Day:
      return local_day(job.end_ms);
    case UsageBy::Week:
      return local_week(job.end_ms);
  }
  return "(none)";
}

void UsageSum::add(const SiteJob& job) {
  ++sum_.jobs;
  sum_.gpu_hours += job.gpu_hours;
  sum_.idle_gpu_hours += job.idle_gpu_hours.value_or(0);
  sum_.energy_j += job.energy_j.value_or(0);
  sum_.co2_g += job.co2_g.value_or(0);
  if (job.source == JobSource::None) ++sum_.jobs_without_figures;
  if (!job.flags.empty()) ++sum_.flagged_jobs;
  if (job.util_pct) {
    util_weight_ += job.gpu_hours;
    util_sum_ += *job.util_pct * job.gpu_hours;
  }
  if (job.sm_active_pct) {
    sm_weight_ += job.gpu_hours;
    sm_sum_ += *job.sm_active_pct * job.gpu_hours;
  }
  if (job.score) {
    score_weight_ += job.gpu_hours;
    score_sum_ += *job.score * job.gpu_hours;
  }
}

UsageRow UsageSum::row(std::string group) const {
  UsageRow r = sum_;
  r.group = std::move(group);
  auto mean = [](double sum, double weight) {
    return weight > 0 ? std::optional<double>(sum / weight) : std::nullopt;
  };
  r.util_pct = mean(util_sum_, util_weight_);
  r.sm_active_pct = mean(sm_sum_, sm_weight_);
  r.score = mean(score_sum_, score_weight_);
  return r;
}

std::vector<UsageRow> group_usage(std::span<const SiteJob> jobs, UsageBy by) {
  std::map<std::string, UsageSum> groups;
  for (const auto& job : jobs) groups[usage_group(job, by)].add(job);
  std::vector<UsageRow> out;
  for (const auto& [group, sum] : groups) out.push_back(sum.row(group));
  if (by != UsageBy::Day && by != UsageBy::Week) {
    std::stable_sort(out.begin(), out.end(), [](const UsageRow& a, const UsageRow& b) {
      return a.gpu_hours > b.gpu_hours;
    });
  }
  return out;
}

UsageRow usage_total(std::span<const SiteJob> jobs) {
  UsageSum sum;
  for (const auto& job : jobs) sum.add(job);
  return sum.row("all");
}

}  // namespace gpuscope::fleet
