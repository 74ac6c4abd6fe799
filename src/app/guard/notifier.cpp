#include "app/guard/notifier.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "core/http.hpp"
#include "core/mail_text.hpp"
#include "core/smtp.hpp"
#include "launch/capture.hpp"
#include "tsdb/site.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::app {
namespace {

constexpr std::int64_t kDayMs = 86'400'000;

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string delivery_word(Delivery d) {
  switch (d) {
    case Delivery::Sent:
      return "sent";
    case Delivery::DryRun:
      return "dry-run";
    case Delivery::AlreadySent:
      return "already sent";
    case Delivery::RateLimited:
      return "rate-limited";
    case Delivery::Failed:
      return "failed";
  }
  return "failed";
}

bool copies_admins(const guard::Rules& rules, const NoticeRequest& r) {
  return r.to_admins || (rules.notify.copy_warnings_to_admins && !r.user.empty());
}

}  // namespace

std::string guard_time_text(std::int64_t ms) {
  return util::utc_text(ms * 1'000'000, "%Y-%m-%dT%H:%M:%SZ");
}

Notifier::Notifier(const guard::Rules& rules, bool enforce, store::GuardState& state)
    : rules_(rules), enforce_(enforce), state_(state) {}

Delivery Notifier::send(const NoticeRequest& request, std::int64_t now_ms) {
  last_error_.clear();
  if (!enforce_) {
    stdout_line(request, Delivery::DryRun, now_ms);
    return Delivery::DryRun;
  }
  const std::string recipient = request.user.empty() ? "admins" : request.user;
  if (!request.user.empty() &&
      state_.notices_to(request.user, now_ms - kDayMs) >= rules_.notify.max_per_user_per_day) {
    stdout_line(request, Delivery::RateLimited, now_ms);
    return Delivery::RateLimited;
  }
  if (!state_.claim_notice(request.key, recipient, now_ms)) return Delivery::AlreadySent;
  // The person is told by mail when the rules name a mail server; the webhook (an admins'
  // channel, mostly) then only adds to it. Without mail, the webhook, else stdout, is the notice.
  bool delivered = !rules_.notify.mail && !rules_.notify.webhook;
  std::string errors;
  if (rules_.notify.webhook) {
    const bool posted = webhook(request);
    if (!posted) errors = last_error_;
    delivered = !rules_.notify.mail && posted;
  }
  if (rules_.notify.mail) {
    delivered = mail(request, now_ms);
    if (!delivered) errors = last_error_ + (errors.empty() ? "" : "; " + errors);
  }
  last_error_ = errors;
  const Delivery result = delivered ? Delivery::Sent : Delivery::Failed;
  if (!delivered) state_.release_notice(request.key);
  stdout_line(request, result, now_ms);
  return result;
}

bool Notifier::mail(const NoticeRequest& request, std::int64_t now_ms) {
  const guard::MailSettings& m = *rules_.notify.mail;
  MailText text;
  text.from = m.from;
  if (!request.user.empty()) {
    const std::string address = request.user + "@" + m.domain;
    if (m.domain.empty() || !plain_address(address)) {
      last_error_ = fmt::format("no mail address for user '{}' (notify.mail.domain)",
                                guard::clean_value(request.user));
      if (!copies_admins(rules_, request)) return false;
    } else {
      text.to.push_back(address);
    }
  }
  if (copies_admins(rules_, request)) {
    for (const auto& admin : rules_.notify.admins) {
      if (plain_address(admin)) (text.to.empty() ? text.to : text.cc).push_back(admin);
    }
  }
  if (text.to.empty()) {
    if (last_error_.empty()) last_error_ = "no recipient (notify.admins is empty)";
    return false;
  }
  text.subject = request.notice.subject;
  text.body = request.notice.body;
  const std::string message = mail_message(text, now_ms, host_name());
  std::vector<std::string> recipients = text.to;
  recipients.insert(recipients.end(), text.cc.begin(), text.cc.end());
  try {
    if (!m.smtp_url.empty()) {
      smtp::Server server{m.smtp_url, "", "", m.ca_file};
      if (!m.credentials.empty()) {
        const std::string secret = tsdb::read_secret_file(m.credentials, "SMTP credentials");
        const auto colon = secret.find(':');
        server.user = secret.substr(0, colon);
        if (colon != std::string::npos) server.password = secret.substr(colon + 1);
      }
      smtp::send(server, m.from, recipients, message);
      return true;
    }
    std::vector<std::string> arguments{"-t", "-oi", "-f", m.from};
    const launch::Captured c = launch::capture_with_input(
        m.program, arguments, message, std::chrono::seconds(60),
        "set notify.mail.program to the site's sendmail (msmtp, postfix's, exim's)");
    if (c.exit_code == 0) return true;
    last_error_ = fmt::format("{} exited {}{}", m.program, c.exit_code,
                              c.err.empty() ? "" : ": " + guard::clean_value(c.err));
  } catch (const Error& e) {
    last_error_ = e.what();
  }
  return false;
}

bool Notifier::webhook(const NoticeRequest& request) {
  const guard::WebhookSettings& w = *rules_.notify.webhook;
  try {
    http::Request post;
    post.url = tsdb::read_secret_file(w.url_file, "webhook URL");
    if (post.url.rfind("https://", 0) != 0 && post.url.rfind("http://127.", 0) != 0 &&
        post.url.rfind("http://localhost", 0) != 0) {
      last_error_ = "the webhook URL must be https:// (or http:// to this machine)";
      return false;
    }
    post.headers = {"Content-Type: application/json"};
    if (!w.token_file.empty()) {
      post.headers.push_back("Authorization: Bearer " +
                             tsdb::read_secret_file(w.token_file, "webhook token"));
    }
    post.ca_file = w.ca_file;
    post.timeout = std::chrono::seconds(15);
    nlohmann::json body = {
        {"text", guard::chat_escape(request.notice.subject + "\n" + request.notice.body)},
        {"gpuscope",
         {{"kind", request.kind},
          {"target", request.target},
          {"user", request.user},
          {"figures", request.figures}}}};
    post.form_body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const http::Response answer = http::perform(post);
    if (answer.status / 100 == 2) return true;
    last_error_ =
        fmt::format("the webhook answered {}: {}", answer.status, http::body_excerpt(answer.body));
  } catch (const Error& e) {
    last_error_ = e.what();
  }
  return false;
}

void Notifier::stdout_line(const NoticeRequest& request, Delivery delivery,
                           std::int64_t now_ms) const {
  if (!rules_.notify.stdout_json) return;
  nlohmann::json line = {{"time", guard_time_text(now_ms)},
                         {"notice", request.kind},
                         {"target", request.target},
                         {"user", request.user},
                         {"delivery", delivery_word(delivery)},
                         {"subject", request.notice.subject},
                         {"figures", request.figures}};
  if (!last_error_.empty()) line["error"] = last_error_;
  fmt::print("{}\n", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::fflush(stdout);
}

}  // namespace gpuscope::app
