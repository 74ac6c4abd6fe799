#include "app/guard/guard_drains.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "fleet/gpu_health.hpp"
#include "guard/slurm_nodes.hpp"
#include "launch/capture.hpp"

namespace gpuscope::app {
namespace {

constexpr const char* kHealthMark = "health_until_ms";
constexpr std::int64_t kLongestWindowMs = 86'400'000;  // a guard stopped longer starts afresh
constexpr const char* kAdminHint =
    "guard reads sinfo and drains with scontrol as the Slurm admin user: run it where they work";

std::vector<guard::SlurmNode> slurm_nodes(const GuardContext& c) {
  const launch::Captured out =
      launch::capture(c.run.sinfo, guard::sinfo_arguments(), std::chrono::seconds(120),
                      "guard reads the nodes with sinfo: run it where sinfo works, or set "
                      "GPUSCOPE_SINFO");
  if (out.timed_out || out.exit_code != 0) {
    throw Error(fmt::format("sinfo {}", out.timed_out ? "took more than 120 s"
                                                      : fmt::format("exited {}", out.exit_code)),
                guard::clean_value(out.err), "check that slurmctld answers (scontrol ping)");
  }
  guard::SinfoRead read = guard::read_sinfo(out.out);
  if (read.unreadable_count > 0) {
    fmt::print(stderr,
               "gpuscope guard: warning: {} lines sinfo gave could not be read and their nodes "
               "are left alone: {}\n",
               read.unreadable_count, fmt::join(read.unreadable, "; "));
  }
  return std::move(read.nodes);
}

// The window of this cycle: since the end of the last one read (a few samples before, so that
// a change between two windows is seen), at most a day.
fleet::HealthWindow window_of(GuardContext& c, std::int64_t now_ms) {
  const std::int64_t overlap_ms = 2 * c.rules.sample_interval_s * 1000;
  const std::optional<std::int64_t> until = c.state.time_mark(kHealthMark);
  std::int64_t from = until ? *until - overlap_ms : now_ms - 3 * c.rules.interval_s * 1000;
  from = std::clamp(from, now_ms - kLongestWindowMs, now_ms - overlap_ms);
  return {from, now_ms, now_ms - 3 * c.rules.sample_interval_s * 1000};
}

std::string day_of(std::int64_t ms) {
  return guard_time_text(ms).substr(0, 10);
}

nlohmann::json fault_figures(const guard::NodeFault& fault, const fleet::HealthWindow& w) {
  return {{"node", fault.node},
          {"reason", fault.reason},
          {"window", {{"from", guard_time_text(w.from_ms)}, {"to", guard_time_text(w.to_ms)}}}};
}

guard::Notice node_notice(const GuardContext& c, const std::string& kind,
                          const guard::NodeFault& fault, const std::string& why) {
  return guard::render_notice(c.templates.by_kind.at(kind),
                              {{"cluster", c.rules.cluster.empty() ? "gpuscope" : c.rules.cluster},
                               {"node", fault.node},
                               {"reason", fault.reason},
                               {"why", why}});
}

// scontrol update NodeName=N State=DRAIN Reason=...: Slurm keeps the reason (sinfo -R,
// scontrol show node).
bool drain_node(const GuardContext& c, const guard::NodeFault& fault, std::string& error) {
  const launch::Captured out = launch::capture(
      c.run.scontrol, {"update", "NodeName=" + fault.node, "State=DRAIN", "Reason=" + fault.reason},
      std::chrono::seconds(60), kAdminHint);
  if (out.exit_code == 0 && !out.timed_out) return true;
  error = fmt::format("scontrol update NodeName={} State=DRAIN exited {}: {}", fault.node,
                      out.exit_code, guard::clean_value(out.err));
  return false;
}

void drain(GuardContext& c, const guard::NodeFault& fault, const fleet::HealthWindow& w,
           std::int64_t now_ms, CycleTally& tally) {
  const nlohmann::json figures = fault_figures(fault, w);
  store::GuardAudit record{now_ms, "drain", fault.node, "", c.enforce, "", figures.dump()};
  std::string error;
  if (c.enforce && !drain_node(c, fault, error)) {
    record.outcome = "failed: " + error;
    ++tally.failed;
    audit(c, record);
    return;
  }
  if (c.enforce) c.state.record_drain(fault.node, fault.reason, now_ms);
  ++tally.drained;
  const Delivery d = c.notifier.send(
      {fmt::format("drain:{}:{}", fault.node, now_ms), "drain", "", fault.node,
       node_notice(c, "drain", fault,
                   fmt::format("its GPUs' health series on the monitoring server from {} to {}",
                               guard_time_text(w.from_ms), guard_time_text(w.to_ms))),
       figures, true},
      now_ms);
  if (!c.enforce) {
    record.outcome = "dry-run";
  } else if (d == Delivery::Failed) {
    record.outcome = "done; the admins' notice failed: " + c.notifier.last_error();
  } else {
    record.outcome = "done";
  }
  audit(c, record);
}

void hold(GuardContext& c, const guard::NodeFault& fault, const std::string& why,
          const fleet::HealthWindow& w, std::int64_t now_ms, CycleTally& tally) {
  ++tally.drains_held;
  nlohmann::json figures = fault_figures(fault, w);
  figures["held"] = why;
  c.notifier.send({fmt::format("drain-held:{}:{}", fault.node, day_of(now_ms)), "drain_held", "",
                   fault.node, node_notice(c, "drain_held", fault, why), figures, true},
                  now_ms);
  audit(c, {now_ms, "drain", fault.node, "", c.enforce, "held: " + why, figures.dump()});
}

}  // namespace

void drain_cycle(GuardContext& c, tsdb::Source& source, std::int64_t now_ms, CycleTally& tally) {
  if (!c.rules.health.enabled) return;
  const std::vector<guard::SlurmNode> nodes = slurm_nodes(c);
  if (nodes.empty()) return;  // no node to drain: the server is not asked
  std::vector<std::string> names;
  for (const auto& n : nodes) names.push_back(n.name);
  const fleet::HealthWindow w = window_of(c, now_ms);
  const std::vector<fleet::GpuHealth> gpus = fleet::read_gpu_health(source, w, names);
  const std::vector<guard::NodeFault> faults = guard::node_faults(c.rules.health, gpus);
  guard::DrainPlan plan = guard::plan_drains(c.rules.health, SIZE_MAX, faults, nodes);
  tally.broken_nodes = faults.size();
  // The circuit breaker: more drains than the rules allow a cycle and none is done (a server
  // whose counters jumped would otherwise take the site's nodes out).
  if (plan.drain.size() > c.rules.max_drains_per_cycle) {
    const std::string why = fmt::format(
        "the circuit breaker: {} nodes would be drained this cycle, the rules allow {} "
        "(max_drains_per_cycle); check the monitoring server, then drain them or raise it",
        plan.drain.size(), c.rules.max_drains_per_cycle);
    fmt::print(stderr, "gpuscope guard: {}\n", why);
    for (auto& fault : plan.drain) plan.held.emplace_back(std::move(fault), why);
    plan.drain.clear();
  }
  const std::size_t failed_before = tally.failed;
  for (const auto& fault : plan.drain) drain(c, fault, w, now_ms, tally);
  for (const auto& [fault, why] : plan.held) hold(c, fault, why, w, now_ms, tally);
  // A drain that failed or waits is looked for again the next cycle: the window stays.
  if (plan.held.empty() && tally.failed == failed_before)
    c.state.set_time_mark(kHealthMark, now_ms);
}

}  // namespace gpuscope::app
