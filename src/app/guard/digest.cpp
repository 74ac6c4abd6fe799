#include "app/guard/digest.hpp"

#include <fmt/format.h>

#include <ctime>
#include <map>

#include "guard/notice_text.hpp"

namespace gpuscope::app {
namespace {

constexpr std::int64_t kDigestSpanMs = 86'400'000;

struct LocalDay {
  std::string day;  // 2026-11-29
  int hour = 0;
};

LocalDay local_day(std::int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm local{};
  localtime_r(&t, &local);
  char text[16] = {};
  std::strftime(text, sizeof text, "%Y-%m-%d", &local);
  return {text, local.tm_hour};
}

bool listed_one_by_one(const store::GuardAudit& a) {
  return a.action == "cancel" || a.action == "drain" || a.outcome.rfind("failed", 0) == 0 ||
         a.outcome.find("held") != std::string::npos;
}

}  // namespace

guard::Notice digest_notice(const std::string& cluster, std::span<const store::GuardAudit> audit,
                            std::int64_t now_ms) {
  std::map<std::string, std::map<std::string, std::size_t>> counts;  // action → outcome → n
  std::string lines;
  for (const auto& a : audit) {
    const std::string outcome = a.outcome.substr(0, a.outcome.find(':'));
    ++counts[a.action][outcome];
    if (listed_one_by_one(a)) {
      lines += fmt::format("  {} {} {}{}: {}\n", guard_time_text(a.time_ms), a.action, a.target,
                           a.user.empty() ? "" : " (" + guard::clean_value(a.user) + ")",
                           guard::clean_value(a.outcome));
    }
  }
  std::string body = fmt::format("What gpuscope guard did on {} from {} to {}:\n\n", cluster,
                                 guard_time_text(now_ms - kDigestSpanMs), guard_time_text(now_ms));
  if (audit.empty()) body += "Nothing: no job was warned or cancelled, no node drained.\n";
  for (const auto& [action, outcomes] : counts) {
    std::string parts;
    for (const auto& [outcome, n] : outcomes) {
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", n, outcome);
    }
    body += fmt::format("  {}: {}\n", action, parts);
  }
  if (!lines.empty()) body += "\nCancels, drains, failures and actions held back:\n" + lines;
  body += "\nThe whole audit: sqlite3 <state> 'SELECT * FROM audit' (docs/guard.md).\n";
  return {fmt::format("[{}] gpuscope guard's day: {} action{}", cluster, audit.size(),
                      audit.size() == 1 ? "" : "s"),
          body};
}

bool send_digest_when_due(GuardContext& c, std::int64_t now_ms) {
  const int hour = c.rules.notify.digest_hour;
  if (hour < 0 || c.rules.notify.admins.empty()) return false;
  const LocalDay today = local_day(now_ms);
  if (today.hour < hour || !c.state.claim_digest(today.day, now_ms)) return false;
  const std::vector<store::GuardAudit> audit = c.state.audit_since(now_ms - kDigestSpanMs);
  const std::string cluster = c.rules.cluster.empty() ? "gpuscope" : c.rules.cluster;
  const Delivery d = c.notifier.send({fmt::format("digest:{}", today.day),
                                      "digest",
                                      "",
                                      cluster,
                                      digest_notice(cluster, audit, now_ms),
                                      {{"day", today.day}, {"actions", audit.size()}},
                                      true},
                                     now_ms);
  return d == Delivery::Sent || d == Delivery::DryRun;
}

}  // namespace gpuscope::app
