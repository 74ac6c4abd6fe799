#include "app/guard/guard_run.hpp"

#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <ctime>

#include "app/guard/guard_cycle.hpp"
#include "app/job/job_server.hpp"
#include "core/error.hpp"
#include "util/environment.hpp"

namespace gpuscope::app {
namespace {

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string program(const char* variable, const std::string& fallback) {
  const std::string given = util::environment_or_empty(variable);
  return given.empty() ? fallback : given;
}

// Waits `seconds` or until SIGTERM or SIGINT (blocked, so taken here); true when one came.
bool wait_or_stop(const sigset_t& stops, std::int64_t seconds) {
  timespec left{static_cast<time_t>(seconds), 0};
  return sigtimedwait(&stops, nullptr, &left) > 0;
}

void say_cycle(const CycleTally& t, bool enforce) {
  fmt::print(
      stderr,
      "gpuscope guard: {} running GPU jobs, {} judged: {} idle, {} without enough samples; "
      "{} warned, {} cancelled, {} advised; {} nodes with a broken GPU, {} drained{}{}{}{}\n",
      t.jobs, t.judged, t.idle, t.unknown, t.warned, t.cancelled, t.advised, t.broken_nodes,
      t.drained, t.drains_held > 0 ? fmt::format(", {} not drained", t.drains_held) : "",
      t.held > 0 ? fmt::format(", {} held by the circuit breaker", t.held) : "",
      t.failed > 0 ? fmt::format(", {} failed", t.failed) : "",
      enforce ? "" : " (a dry run: nothing was done or sent)");
}

}  // namespace

int run_guard(GuardRun o) {
  o.squeue = program("GPUSCOPE_SQUEUE", o.squeue);
  o.scancel = program("GPUSCOPE_SCANCEL", o.scancel);
  o.scontrol = program("GPUSCOPE_SCONTROL", o.scontrol);
  o.sinfo = program("GPUSCOPE_SINFO", o.sinfo);
  const guard::Rules rules = guard::read_rules(o.rules);
  const GuardTemplates templates = load_templates(rules);
  const bool enforce = rules.enforce && !o.dry_run;
  store::GuardState state = store::GuardState::open(o.state.value_or(rules.state));
  if (state.switch_mode(enforce ? "enforce" : "dry-run")) {
    fmt::print(stderr,
               "gpuscope guard: now {}: the jobs' memory of the other mode is forgotten "
               "(the audit stays)\n",
               enforce ? "enforcing" : "a dry run");
  }
  const std::unique_ptr<tsdb::Source> source = open_job_server(o.server, o.config);
  Notifier notifier(rules, enforce, state);
  GuardContext context{o, rules, templates, enforce, state, notifier};
  const std::int64_t interval_s = o.interval_s.value_or(rules.interval_s);
  fmt::print(stderr, "gpuscope guard: {} ({}), every {} s, state {}\n",
             enforce ? "enforcing" : "a dry run: nothing will be cancelled or sent",
             enforce ? fmt::format("the rules {} say enforce: true", o.rules)
                     : (o.dry_run ? "--dry-run" : fmt::format("{} says enforce: false", o.rules)),
             interval_s, state.path().string());
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGTERM);
  sigaddset(&stops, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  int status = 0;
  for (;;) {
    try {
      const CycleTally tally = run_cycle(context, *source, wall_ms());
      say_cycle(tally, enforce);
      status = tally.held > 0 || tally.failed > 0 || tally.drains_held > 0 ? 1 : 0;
    } catch (const Error& e) {
      if (o.once) throw;
      fmt::print(stderr, "gpuscope guard: error: this cycle failed, nothing was done: {}\n",
                 e.what());
      status = 1;
    }
    if (o.once || wait_or_stop(stops, interval_s)) break;
  }
  return status;
}

}  // namespace gpuscope::app
