// What guard does with a verdict (docs/guard.md, "What guard does"): the notice of a warning or
// of advice, a cancel (the reason put in the job's AdminComment with scontrol, then scancel),
// each in the audit with the figures behind it. A dry run does none of it and says what it
// would.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "app/guard/guard_run.hpp"
#include "app/guard/notifier.hpp"
#include "guard/idle_judgement.hpp"
#include "guard/notice_text.hpp"
#include "guard/rules.hpp"
#include "store/guard_state.hpp"

namespace gpuscope::app {

// The templates of the rules (the site's files, else the built-in texts), read once at start.
struct GuardTemplates {
  std::map<std::string, guard::NoticeTemplate> by_kind;  // first_warning, ..., drain, breaker
};
GuardTemplates load_templates(const guard::Rules& rules);

// What a cycle works with.
struct GuardContext {
  const GuardRun& run;
  const guard::Rules& rules;
  const GuardTemplates& templates;
  bool enforce;
  store::GuardState& state;
  Notifier& notifier;
};

// What a cycle did, for its summary line and exit code.
struct CycleTally {
  std::size_t jobs = 0;    // running GPU jobs
  std::size_t judged = 0;  // not left alone
  std::size_t idle = 0;
  std::size_t unknown = 0;
  std::size_t warned = 0;
  std::size_t cancelled = 0;
  std::size_t advised = 0;
  std::size_t held = 0;          // by the circuit breaker
  std::size_t broken_nodes = 0;  // nodes with a broken GPU
  std::size_t drained = 0;
  std::size_t drains_held = 0;  // by max_drains_per_cycle or max_drained_share
  std::size_t failed = 0;       // actions that did not happen
};

// Takes the step `verdict` earned for `job`; updates `memory` with what was done (nothing in a
// dry run). `held`: the circuit breaker holds cancels back this cycle.
void take_step(GuardContext& c, const guard::RunningJob& job, const guard::IdleVerdict& verdict,
               guard::JobMemory& memory, bool held, std::int64_t now_ms, CycleTally& tally);

// Sends the advice that `job`'s GPUs are too large (`why`), once.
void give_advice(GuardContext& c, const guard::RunningJob& job, const std::string& why,
                 guard::JobMemory& memory, std::int64_t now_ms, CycleTally& tally);

// Records an action in the state's audit and the rules' audit_log (JSON lines).
void audit(GuardContext& c, const store::GuardAudit& record);

// The verdict's figures as JSON, for notices and the audit.
nlohmann::json verdict_figures(const guard::RunningJob& job, const guard::IdleVerdict& verdict);

}  // namespace gpuscope::app
