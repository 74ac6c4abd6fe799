// guard's notices, to their people (docs/guard.md, "Notices"): a JSON line on stdout for log
// shippers (always, when the rules keep `stdout: true`), a mail (SMTP with TLS, or the site's
// sendmail) to the user at the rules' domain and to the admins, a webhook post (Slack's and
// Mattermost's {"text": ...}, with the structured figures beside it). A notice goes once: its
// key (job, step) is claimed in the state database before it is sent and given back when
// every channel failed; a person past the day's limit waits for the next day.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "guard/notice_text.hpp"
#include "guard/rules.hpp"
#include "store/guard_state.hpp"

namespace gpuscope::app {

enum class Delivery {
  Sent,         // every channel asked took it
  DryRun,       // said on stdout only: a dry run
  AlreadySent,  // its key was claimed before: not sent again
  RateLimited,  // the person had the day's notices already
  Failed,       // no channel took it (its key is given back)
};

struct NoticeRequest {
  std::string key;     // "job:123:first_warning"
  std::string kind;    // first_warning, second_warning, cancel, advice, drain, breaker
  std::string user;    // "" for the admins' notices
  std::string target;  // the job or the node
  guard::Notice notice;
  nlohmann::json figures;  // what triggered it
  bool to_admins = false;  // also (or only, without a user) to the admins
};

class Notifier {
 public:
  Notifier(const guard::Rules& rules, bool enforce, store::GuardState& state);

  Delivery send(const NoticeRequest& request, std::int64_t now_ms);

  // The last failure's words, for the audit ("" when none).
  const std::string& last_error() const { return last_error_; }

 private:
  bool mail(const NoticeRequest& request, std::int64_t now_ms);
  bool webhook(const NoticeRequest& request);
  void stdout_line(const NoticeRequest& request, Delivery delivery, std::int64_t now_ms) const;

  const guard::Rules& rules_;
  bool enforce_;
  store::GuardState& state_;
  std::string last_error_;
};

// "2026-11-29T08:00:00Z" of a time, for notices and the audit.
std::string guard_time_text(std::int64_t ms);

}  // namespace gpuscope::app
