#include "app/guard/guard_steps.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "launch/capture.hpp"
#include "util/small_file.hpp"

namespace gpuscope::app {
namespace {

// What the next step will be, in a sentence for the notice.
std::string next_step_text(const guard::Rules& rules, const guard::IdleVerdict& v) {
  const guard::Escalation& steps = v.interactive ? rules.idle.interactive_steps : rules.idle.steps;
  if (!steps.cancel_s) return "It will not be cancelled for this, but please release the GPUs.";
  const std::int64_t left = std::max<std::int64_t>(*steps.cancel_s - v.idle_s, rules.idle.notice_s);
  return fmt::format(
      "If its GPUs stay idle, it will be cancelled in about {} (after {} of "
      "idleness).",
      guard::duration_words(left), guard::duration_words(*steps.cancel_s));
}

std::map<std::string, std::string> values_of(const GuardContext& c, const guard::RunningJob& job,
                                             const guard::IdleVerdict& v) {
  return {{"user", job.user},
          {"job", job.shown_id},
          {"job_name", job.name},
          {"cluster", c.rules.cluster.empty() ? "gpuscope" : c.rules.cluster},
          {"partition", job.partition},
          {"account", job.account},
          {"gpus", std::to_string(job.gpus)},
          {"idle_gpus", std::to_string(v.window.idle)},
          {"idle_for", guard::duration_words(v.idle_s)},
          {"next_step", next_step_text(c.rules, v)},
          {"why", v.why},
          {"report_command", fmt::format("gpuscope job {}", job.id)},
          {"scancel_command", fmt::format("scancel {}", job.shown_id)}};
}

// scontrol update JobId=ID AdminComment=...: where Slurm keeps why (sacct shows it).
bool cancel_job(GuardContext& c, const guard::RunningJob& job, const std::string& reason,
                std::string& error) {
  const auto limit = std::chrono::seconds(60);
  const launch::Captured comment = launch::capture(
      c.run.scontrol, {"update", "JobId=" + job.id, "AdminComment=gpuscope guard: " + reason},
      limit, "guard runs scontrol and scancel as the Slurm admin user: run it where they work");
  const launch::Captured cancel = launch::capture(
      c.run.scancel, {job.id}, limit,
      "guard runs scontrol and scancel as the Slurm admin user: run it where they work");
  if (cancel.exit_code == 0 && !cancel.timed_out) {
    if (comment.exit_code != 0) {
      error = fmt::format("cancelled, but scontrol did not record the reason: {}",
                          guard::clean_value(comment.err));
    }
    return true;
  }
  error = fmt::format("scancel {} exited {}: {}", job.id, cancel.exit_code,
                      guard::clean_value(cancel.err));
  return false;
}

const char* outcome_of(Delivery d, bool enforce) {
  if (!enforce) return "dry-run";
  switch (d) {
    case Delivery::Sent:
      return "done";
    case Delivery::AlreadySent:
      return "done before";
    case Delivery::RateLimited:
      return "waits: the person's notices for the day are used up";
    default:
      break;
  }
  return "failed";
}

}  // namespace

GuardTemplates load_templates(const guard::Rules& rules) {
  GuardTemplates t;
  const std::map<std::string, std::string> files = {
      {"first_warning", rules.idle.first_warning_template},
      {"second_warning", rules.idle.second_warning_template},
      {"cancel", rules.idle.cancel_template},
      {"advice", rules.too_large.template_file},
      {"drain", ""},
      {"drain_held", ""}};
  for (const auto& [kind, file] : files) {
    if (file.empty()) {
      t.by_kind[kind] = guard::builtin_notice_template(kind);
      continue;
    }
    const auto text = util::read_small_file(file, 64 * 1024);
    if (!text) {
      throw Error::usage(fmt::format("cannot read the {} template {}", kind, file),
                         text.error().reason, "fix the path in the rules file (idle.templates)");
    }
    t.by_kind[kind] = guard::parse_notice_template(*text, file);
  }
  return t;
}

nlohmann::json verdict_figures(const guard::RunningJob& job, const guard::IdleVerdict& v) {
  nlohmann::json f = {{"job", job.shown_id},
                      {"job_id", job.id},
                      {"user", job.user},
                      {"account", job.account},
                      {"partition", job.partition},
                      {"gpus", job.gpus},
                      {"idle_s", v.idle_s},
                      {"interactive", v.interactive},
                      {"why", v.why}};
  if (v.window.to_ms > 0) {
    f["window"] = {{"from", guard_time_text(v.window.from_ms)},
                   {"to", guard_time_text(v.window.to_ms)},
                   {"gpus_found", v.window.found},
                   {"gpus_covered", v.window.covered},
                   {"gpus_idle", v.window.idle}};
    if (v.window.mean_activity_pct) f["window"]["mean_activity_pct"] = *v.window.mean_activity_pct;
  }
  if (v.memory.idle_since_ms) f["idle_since"] = guard_time_text(*v.memory.idle_since_ms);
  return f;
}

void audit(GuardContext& c, const store::GuardAudit& record) {
  c.state.audit(record);
  if (c.rules.audit_log.empty()) return;
  const nlohmann::json line = {{"time", guard_time_text(record.time_ms)},
                               {"action", record.action},
                               {"target", record.target},
                               {"user", record.user},
                               {"enforced", record.enforced},
                               {"outcome", record.outcome},
                               {"figures", nlohmann::json::parse(record.figures, nullptr, false)}};
  const std::string text =
      line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const int fd = ::open(c.rules.audit_log.c_str(),
                        O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    fmt::print(stderr, "gpuscope guard: warning: cannot append to the audit log {} ({})\n",
               c.rules.audit_log, std::strerror(errno));
  }
  if (fd >= 0) ::close(fd);
}

void take_step(GuardContext& c, const guard::RunningJob& job, const guard::IdleVerdict& verdict,
               guard::JobMemory& memory, bool held, std::int64_t now_ms, CycleTally& tally) {
  const std::string kind = guard::step_word(verdict.step);
  const nlohmann::json figures = verdict_figures(job, verdict);
  store::GuardAudit record{now_ms, kind, job.shown_id, job.user, c.enforce, "", figures.dump()};
  std::string error;
  bool done = true;
  if (verdict.step == guard::Step::Cancel) {
    if (held) {
      record.outcome = "held by the circuit breaker";
      ++tally.held;
      audit(c, record);
      return;
    }
    if (c.enforce) done = cancel_job(c, job, verdict.why, error);
  }
  if (done) {
    const guard::Notice notice =
        guard::render_notice(c.templates.by_kind.at(kind), values_of(c, job, verdict));
    const Delivery d =
        c.notifier.send({fmt::format("job:{}:{}", job.id, kind), kind, job.user, job.shown_id,
                         notice, figures, verdict.step == guard::Step::Cancel},
                        now_ms);
    record.outcome = outcome_of(d, c.enforce);
    if (verdict.step == guard::Step::Cancel && c.enforce) record.outcome = "done";
    if (d == Delivery::Failed) error += (error.empty() ? "" : "; ") + c.notifier.last_error();
    const bool taken =
        d == Delivery::Sent || d == Delivery::AlreadySent || verdict.step == guard::Step::Cancel;
    if (taken || !c.enforce) {  // a dry run remembers what it would have done
      if (verdict.step == guard::Step::FirstWarning) memory.first_warning_ms = now_ms;
      if (verdict.step == guard::Step::SecondWarning) memory.second_warning_ms = now_ms;
      if (verdict.step == guard::Step::Cancel) memory.cancelled_ms = now_ms;
    }
    if (verdict.step == guard::Step::Cancel) {
      ++tally.cancelled;
    } else if (d == Delivery::Failed) {
      ++tally.failed;  // the warning waits for a notice that gets through
    } else {
      ++tally.warned;
    }
  } else {
    record.outcome = "failed";
    ++tally.failed;
  }
  if (!error.empty()) record.outcome += ": " + error;
  audit(c, record);
}

void give_advice(GuardContext& c, const guard::RunningJob& job, const std::string& why,
                 guard::JobMemory& memory, std::int64_t now_ms, CycleTally& tally) {
  guard::IdleVerdict v;
  v.why = why;
  const nlohmann::json figures = verdict_figures(job, v);
  const guard::Notice notice =
      guard::render_notice(c.templates.by_kind.at("advice"), values_of(c, job, v));
  const Delivery d = c.notifier.send(
      {fmt::format("job:{}:advice", job.id), "advice", job.user, job.shown_id, notice, figures},
      now_ms);
  if (!c.enforce || d == Delivery::Sent || d == Delivery::AlreadySent) {
    memory.advised_too_large = true;
  }
  ++tally.advised;
  audit(c, {now_ms, "advice", job.shown_id, job.user, c.enforce, outcome_of(d, c.enforce),
            figures.dump()});
}

}  // namespace gpuscope::app
