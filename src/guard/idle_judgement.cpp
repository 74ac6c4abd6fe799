#include "guard/idle_judgement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "guard/notice_text.hpp"

namespace gpuscope::guard {
namespace {

bool listed(const std::vector<std::string>& list, const std::string& word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// The streak after this window: continued, begun at the window's start, or ended.
void remember_streak(IdleVerdict& verdict, const JobMemory& memory, const WindowFigures& window) {
  verdict.memory.checked_until_ms = window.to_ms;
  if (verdict.activity != Activity::Idle) {
    verdict.memory.idle_since_ms.reset();
    return;
  }
  const bool continued =
      memory.idle_since_ms && memory.checked_until_ms && *memory.checked_until_ms >= window.from_ms;
  verdict.memory.idle_since_ms = continued ? *memory.idle_since_ms : window.from_ms;
}

// The step the streak has earned now, given the steps already taken.
Step earned_step(const IdleRule& rule, const Escalation& steps, const JobMemory& memory,
                 std::int64_t idle_s, std::int64_t now_ms, std::string& waiting) {
  if (memory.cancelled_ms) {
    waiting = "cancelled already; it is still ending";
    return Step::None;
  }
  const bool first_done = !steps.first_warning_s || memory.first_warning_ms;
  const bool second_done = !steps.second_warning_s || memory.second_warning_ms;
  if (steps.cancel_s && idle_s >= *steps.cancel_s && first_done && second_done) {
    const std::int64_t last_warning_ms =
        std::max(memory.first_warning_ms.value_or(0), memory.second_warning_ms.value_or(0));
    if (last_warning_ms == 0 || now_ms - last_warning_ms >= rule.notice_s * 1000) {
      return Step::Cancel;
    }
    waiting = fmt::format("the cancel waits until {} after the last warning",
                          duration_words(rule.notice_s));
    return Step::None;
  }
  if (steps.second_warning_s && idle_s >= *steps.second_warning_s && first_done &&
      !memory.second_warning_ms) {
    return Step::SecondWarning;
  }
  if (steps.first_warning_s && idle_s >= *steps.first_warning_s && !memory.first_warning_ms) {
    return Step::FirstWarning;
  }
  return Step::None;
}

}  // namespace

bool is_interactive(const IdleRule& rule, const RunningJob& job) {
  if (!job.batch) return true;
  return std::any_of(rule.interactive_names.begin(), rule.interactive_names.end(),
                     [&](const std::string& prefix) { return job.name.rfind(prefix, 0) == 0; });
}

std::optional<std::string> exemption(const IdleRule& rule, const RunningJob& job,
                                     std::int64_t now_ms) {
  if (!rule.enabled) return "the idle rule is off";
  if (!rule.partitions.empty() && !listed(rule.partitions, job.partition)) {
    return fmt::format("partition {} is not watched", job.partition);
  }
  if (listed(rule.exempt.users, job.user)) return fmt::format("user {} is exempt", job.user);
  if (listed(rule.exempt.accounts, job.account)) {
    return fmt::format("account {} is exempt", job.account);
  }
  if (listed(rule.exempt.partitions, job.partition)) {
    return fmt::format("partition {} is exempt", job.partition);
  }
  if (listed(rule.exempt.qos, job.qos)) return fmt::format("QOS {} is exempt", job.qos);
  if (now_ms - job.start_ms < rule.min_age_s * 1000) {
    return fmt::format("it has run less than {}", duration_words(rule.min_age_s));
  }
  return std::nullopt;
}

std::int64_t window_start(const IdleRule& rule, const RunningJob& job, const JobMemory& memory,
                          std::int64_t now_ms, std::int64_t max_gap_ms,
                          std::int64_t min_window_ms) {
  if (memory.checked_until_ms && now_ms - *memory.checked_until_ms <= max_gap_ms &&
      *memory.checked_until_ms < now_ms) {
    return std::max(std::min(*memory.checked_until_ms, now_ms - min_window_ms), job.start_ms);
  }
  const Escalation& steps = is_interactive(rule, job) ? rule.interactive_steps : rule.steps;
  const std::int64_t longest =
      std::max({steps.first_warning_s.value_or(0), steps.second_warning_s.value_or(0),
                steps.cancel_s.value_or(0), rule.min_age_s});
  return std::max(job.start_ms, now_ms - longest * 1000);
}

WindowFigures window_figures(std::span<const fleet::GpuAggregate> gpus, int allocated,
                             std::int64_t from_ms, std::int64_t to_ms,
                             std::int64_t sample_interval_s) {
  WindowFigures w;
  w.from_ms = from_ms;
  w.to_ms = to_ms;
  w.allocated = allocated;
  const double promised =
      static_cast<double>(to_ms - from_ms) / 1000.0 / static_cast<double>(sample_interval_s);
  double activity = 0;
  std::size_t with_activity = 0;
  for (const auto& gpu : gpus) {
    ++w.found;
    if (gpu.util_pct) {
      activity += *gpu.util_pct;
      ++with_activity;
    }
    if (gpu.samples < 1 || gpu.samples < 0.5 * promised || !gpu.idle_share) continue;
    ++w.covered;
    if (*gpu.idle_share >= 1 - 1e-9) ++w.idle;
  }
  if (with_activity > 0) w.mean_activity_pct = activity / static_cast<double>(with_activity);
  return w;
}

IdleVerdict judge_idle(const IdleRule& rule, const RunningJob& job, const JobMemory& memory,
                       const WindowFigures& window, std::int64_t now_ms) {
  IdleVerdict verdict;
  verdict.memory = memory;
  verdict.window = window;
  verdict.interactive = is_interactive(rule, job);
  verdict.skipped = exemption(rule, job, now_ms);
  if (verdict.skipped) return verdict;
  const auto needed = static_cast<std::size_t>(
      std::ceil(rule.gpu_share * static_cast<double>(window.allocated) - 1e-9));
  if (window.covered >= needed && window.idle >= needed) {
    verdict.activity = Activity::Idle;
  } else if (window.covered > window.idle &&
             window.covered - window.idle > static_cast<std::size_t>(window.allocated) - needed) {
    verdict.activity = Activity::Busy;
  }
  remember_streak(verdict, memory, window);
  const std::string gpus = fmt::format("{} of {} GPUs idle (activity at most {:g} %)", window.idle,
                                       window.allocated, rule.activity_pct);
  if (verdict.activity == Activity::Unknown) {
    verdict.why = fmt::format(
        "too few samples to judge: {} of {} GPUs covered between the "
        "server's samples",
        window.covered, window.allocated);
    return verdict;
  }
  if (verdict.activity == Activity::Busy) {
    verdict.why = fmt::format("busy: {}", gpus);
    return verdict;
  }
  verdict.idle_s = (now_ms - *verdict.memory.idle_since_ms) / 1000;
  std::string waiting;
  verdict.step = earned_step(rule, verdict.interactive ? rule.interactive_steps : rule.steps,
                             memory, verdict.idle_s, now_ms, waiting);
  verdict.why = fmt::format("{} for {}{}", gpus, duration_words(verdict.idle_s),
                            waiting.empty() ? "" : "; " + waiting);
  return verdict;
}

std::optional<std::string> judge_too_large(const TooLargeRule& rule, const RunningJob& job,
                                           std::span<const fleet::GpuAggregate> gpus,
                                           std::int64_t now_ms) {
  if (!rule.enabled || now_ms - job.start_ms < rule.after_s * 1000 || gpus.empty()) {
    return std::nullopt;
  }
  double peak_share = 0;
  double activity = 0;
  for (const auto& gpu : gpus) {
    std::optional<double> total = gpu.memory_total_bytes;
    if (!total && gpu.memory_used_mean_bytes && gpu.memory_free_mean_bytes) {
      total = *gpu.memory_used_mean_bytes + *gpu.memory_free_mean_bytes;
    }
    if (!gpu.memory_peak_bytes || !total || *total <= 0 || !gpu.util_pct) return std::nullopt;
    peak_share = std::max(peak_share, *gpu.memory_peak_bytes / *total);
    activity = std::max(activity, *gpu.util_pct);
  }
  if (peak_share > rule.memory_share || activity > rule.activity_pct) return std::nullopt;
  return fmt::format(
      "its GPUs used at most {:.0f} % of their memory and {:.0f} % activity over {}: a MIG "
      "slice or a smaller GPU would do",
      peak_share * 100, activity, duration_words((now_ms - job.start_ms) / 1000));
}

std::string step_word(Step step) {
  switch (step) {
    case Step::FirstWarning:
      return "first_warning";
    case Step::SecondWarning:
      return "second_warning";
    case Step::Cancel:
      return "cancel";
    case Step::None:
      break;
  }
  return "none";
}

}  // namespace gpuscope::guard
