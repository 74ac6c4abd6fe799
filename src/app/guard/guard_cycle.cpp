#include "app/guard/guard_cycle.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "app/guard/digest.hpp"
#include "app/guard/guard_drains.hpp"
#include "core/error.hpp"
#include "fleet/gpu_aggregates.hpp"
#include "guard/running_jobs.hpp"
#include "launch/capture.hpp"

namespace gpuscope::app {
namespace {

constexpr std::int64_t kForgetAfterMs = 7 * 86'400'000LL;

guard::SqueueRead running_jobs(const GuardContext& c) {
  const launch::Captured out = launch::capture(
      c.run.squeue, guard::squeue_arguments(), std::chrono::seconds(120),
      "guard reads the running jobs with squeue --json: run it where squeue works, or set "
      "GPUSCOPE_SQUEUE");
  if (out.timed_out || out.exit_code != 0) {
    throw Error(
        fmt::format("squeue --json {}", out.timed_out ? "took more than 120 s"
                                                      : fmt::format("exited {}", out.exit_code)),
        guard::clean_value(out.err), "check that slurmctld answers (scontrol ping)");
  }
  guard::SqueueRead read = guard::read_squeue_json(out.out);
  if (read.unreadable_count > 0) {
    fmt::print(stderr,
               "gpuscope guard: warning: {} job records squeue gave could not be read "
               "and are left alone: {}\n",
               read.unreadable_count, fmt::join(read.unreadable, "; "));
  }
  return read;
}

// The jobs to ask the server about and the window of each.
struct Asked {
  std::vector<fleet::AggregateJob> jobs;
  std::map<std::string, std::int64_t> from_ms;
};

Asked windows(const GuardContext& c, const std::vector<guard::RunningJob>& jobs,
              std::map<std::string, guard::JobMemory>& memories, std::int64_t now_ms) {
  Asked asked;
  const std::int64_t max_gap_ms = 3 * c.rules.interval_s * 1000;
  for (const auto& job : jobs) {
    if (guard::exemption(c.rules.idle, job, now_ms)) continue;
    const std::int64_t from = guard::window_start(c.rules.idle, job, memories[job.id], now_ms,
                                                  max_gap_ms, 3 * c.rules.sample_interval_s * 1000);
    asked.from_ms[job.id] = from;
    asked.jobs.push_back({job.id, from, now_ms, job.nodes, false});
  }
  return asked;
}

fleet::AggregateRead aggregates(tsdb::Source& source, const std::vector<fleet::AggregateJob>& jobs,
                                double idle_pct, fleet::Figures figures) {
  if (jobs.empty()) return {};
  fleet::AggregateOptions options;
  options.figures = figures;
  options.idle_util_pct = idle_pct;
  options.slack_ms = 0;  // a window's edges are exactly the cycle's
  return fleet::read_gpu_aggregates(source, jobs, options);
}

// Jobs old enough for the too-large advice and not advised yet: their GPUs since their start.
void advise(GuardContext& c, tsdb::Source& source, const std::vector<guard::RunningJob>& jobs,
            std::map<std::string, guard::JobMemory>& memories, std::int64_t now_ms,
            CycleTally& tally) {
  const guard::TooLargeRule& rule = c.rules.too_large;
  if (!rule.enabled) return;
  std::vector<fleet::AggregateJob> asked;
  std::map<std::string, const guard::RunningJob*> by_id;
  for (const auto& job : jobs) {
    if (memories[job.id].advised_too_large || now_ms - job.start_ms < rule.after_s * 1000) continue;
    if (guard::exemption(c.rules.idle, job, now_ms)) continue;
    asked.push_back({job.id, job.start_ms, now_ms, job.nodes, false});
    by_id[job.id] = &job;
  }
  const fleet::AggregateRead read =
      aggregates(source, asked, c.rules.idle.activity_pct, fleet::Figures::UtilizationAndMemory);
  for (const auto& [id, gpus] : read.by_job) {
    const auto job = by_id.find(id);
    if (job == by_id.end()) continue;
    if (const auto why = guard::judge_too_large(rule, *job->second, gpus, now_ms)) {
      give_advice(c, *job->second, *why, memories[id], now_ms, tally);
    }
  }
}

}  // namespace

CycleTally run_cycle(GuardContext& c, tsdb::Source& source, std::int64_t now_ms) {
  CycleTally tally;
  const guard::SqueueRead read = running_jobs(c);
  tally.jobs = read.jobs.size();
  std::map<std::string, guard::JobMemory> memories = c.state.jobs();
  const Asked asked = windows(c, read.jobs, memories, now_ms);
  const fleet::AggregateRead found =
      aggregates(source, asked.jobs, c.rules.idle.activity_pct, fleet::Figures::Utilization);
  std::vector<std::pair<const guard::RunningJob*, guard::IdleVerdict>> earned;
  for (const auto& job : read.jobs) {
    const auto from = asked.from_ms.find(job.id);
    if (from == asked.from_ms.end()) continue;
    ++tally.judged;
    const auto gpus = found.by_job.find(job.id);
    const std::vector<fleet::GpuAggregate> none;
    const auto window =
        guard::window_figures(gpus == found.by_job.end() ? none : gpus->second, job.gpus,
                              from->second, now_ms, c.rules.sample_interval_s);
    guard::IdleVerdict verdict =
        guard::judge_idle(c.rules.idle, job, memories[job.id], window, now_ms);
    if (verdict.activity == guard::Activity::Idle) ++tally.idle;
    if (verdict.activity == guard::Activity::Unknown) ++tally.unknown;
    memories[job.id] = verdict.memory;
    if (verdict.step != guard::Step::None) earned.emplace_back(&job, std::move(verdict));
  }
  const auto cancels =
      static_cast<std::size_t>(std::count_if(earned.begin(), earned.end(), [](const auto& e) {
        return e.second.step == guard::Step::Cancel;
      }));
  const bool held = cancels > c.rules.max_cancels_per_cycle;
  if (held) {
    fmt::print(stderr,
               "gpuscope guard: the circuit breaker holds {} cancels back (the rules allow {} "
               "a cycle): check the monitoring server, then raise max_cancels_per_cycle if they "
               "are right\n",
               cancels, c.rules.max_cancels_per_cycle);
    c.notifier.send({fmt::format("breaker:{}", now_ms / 3'600'000),
                     "breaker",
                     "",
                     "cancels",
                     {"gpuscope guard: the circuit breaker held cancels back",
                      fmt::format("{} jobs earned a cancel in one cycle; the rules allow {}. "
                                  "None was cancelled.\n",
                                  cancels, c.rules.max_cancels_per_cycle)},
                     {{"cancels", cancels}, {"limit", c.rules.max_cancels_per_cycle}},
                     true},
                    now_ms);
  }
  for (auto& [job, verdict] : earned)
    take_step(c, *job, verdict, memories[job->id], held, now_ms, tally);
  advise(c, source, read.jobs, memories, now_ms, tally);
  c.state.begin();
  for (const auto& job : read.jobs) {
    if (asked.from_ms.count(job.id) > 0 || memories.count(job.id) > 0) {
      c.state.save_job(job.id, memories[job.id], now_ms);
    }
  }
  c.state.forget_jobs(now_ms - kForgetAfterMs);
  c.state.commit();
  try {
    drain_cycle(c, source, now_ms, tally);
  } catch (const Error& e) {
    fmt::print(stderr, "gpuscope guard: error: the nodes' health was not read, none drained: {}\n",
               e.what());
    ++tally.failed;
  }
  send_digest_when_due(c, now_ms);
  return tally;
}

}  // namespace gpuscope::app
