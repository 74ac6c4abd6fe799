#include "guard/rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include "core/error.hpp"

namespace gpuscope::guard {
namespace {

constexpr const char* kDocs = "see docs/guard.md, \"The rules file\"";

// One mapping of the file: its keys are read by name, and what is left unread is an error.
class Section {
 public:
  // The mapping at `pointer`; absent or null: an empty one (its keys all absent).
  Section(const YamlDocument& document, std::string pointer)
      : document_(document), pointer_(std::move(pointer)) {
    const nlohmann::json::json_pointer at(pointer_);
    if (!document_.value.contains(at)) return;
    const nlohmann::json& value = document_.value.at(at);
    if (value.is_null()) return;
    if (!value.is_object()) fail(pointer_, "is not a mapping of keys");
    object_ = &value;
  }

  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const {
    const std::string name = pointer.empty() ? "the file" : fmt::format("'{}'", key_path(pointer));
    throw Error::usage(fmt::format("{}: {} {}", document_.where(pointer), name, what), {}, kDocs);
  }

  const nlohmann::json* find(const std::string& key) {
    seen_.insert(key);
    if (object_ == nullptr) return nullptr;
    const auto found = object_->find(key);
    if (found == object_->end() || found->is_null()) return nullptr;
    return &*found;
  }
  std::string at(const std::string& key) const { return pointer_ + "/" + key; }

  bool has(const std::string& key) { return find(key) != nullptr; }
  Section child(const std::string& key) {
    find(key);
    return Section(document_, at(key));
  }

  void flag(const std::string& key, bool& out) {
    if (const auto* v = find(key)) {
      if (!v->is_boolean()) fail(at(key), "must be true or false");
      out = v->get<bool>();
    }
  }
  void number(const std::string& key, double& out, double low, double high, const char* unit) {
    if (const auto* v = find(key)) {
      if (!v->is_number() || v->get<double>() < low || v->get<double>() > high) {
        fail(at(key), fmt::format("must be a number from {} to {}{}", low, high, unit));
      }
      out = v->get<double>();
    }
  }
  template <typename Count>
  void count(const std::string& key, Count& out, std::int64_t low, std::int64_t high) {
    if (const auto* v = find(key)) {
      if (!v->is_number_integer() || v->get<std::int64_t>() < low ||
          v->get<std::int64_t>() > high) {
        fail(at(key), fmt::format("must be a whole number from {} to {}", low, high));
      }
      out = static_cast<Count>(v->get<std::int64_t>());
    }
  }
  void text(const std::string& key, std::string& out) {
    if (const auto* v = find(key)) {
      if (!v->is_string() || v->get<std::string>().empty())
        fail(at(key), "must be a non-empty text");
      out = v->get<std::string>();
    }
  }
  void words(const std::string& key, std::vector<std::string>& out) {
    if (const auto* v = find(key)) {
      if (!v->is_array()) fail(at(key), "must be a list");
      out.clear();
      for (std::size_t i = 0; i < v->size(); ++i) {
        const auto& item = (*v)[i];
        if (!item.is_string() && !item.is_number_integer()) {
          fail(fmt::format("{}/{}", at(key), i), "must be a word");
        }
        out.push_back(item.is_string() ? item.get<std::string>() : item.dump());
      }
    }
  }
  // A duration: "90m", "2h", "300s", "1h30m", or seconds; "never" when `never` may be given.
  void duration(const std::string& key, std::optional<std::int64_t>& out, bool never_allowed) {
    if (const auto* v = find(key)) {
      if (never_allowed && v->is_string() && v->get<std::string>() == "never") {
        out.reset();
        return;
      }
      std::optional<std::int64_t> seconds;
      if (v->is_number_integer()) seconds = v->get<std::int64_t>();
      if (v->is_string()) seconds = parse_duration_s(v->get<std::string>());
      if (!seconds || *seconds < 1 || *seconds > 366 * 86'400) {
        fail(at(key), fmt::format("must be a duration such as 90m, 2h or 300s{}",
                                  never_allowed ? ", or never" : ""));
      }
      out = seconds;
    }
  }
  void duration(const std::string& key, std::int64_t& out) {
    std::optional<std::int64_t> value = out;
    duration(key, value, false);
    out = *value;
  }

  // Every key of the mapping was read; the first that was not is an error.
  void done() const {
    if (object_ == nullptr) return;
    for (const auto& [key, value] : object_->items()) {
      if (!seen_.contains(key)) {
        fail(at(key),
             fmt::format("is not a key gpuscope knows here (known: {})", fmt::join(seen_, ", ")));
      }
    }
  }

 private:
  static std::string key_path(const std::string& pointer) {
    std::string out = pointer.substr(pointer.empty() ? 0 : 1);
    std::replace(out.begin(), out.end(), '/', '.');
    return out;
  }

  const YamlDocument& document_;
  std::string pointer_;
  const nlohmann::json* object_ = nullptr;
  std::set<std::string> seen_;
};

void read_exemptions(Section section, Exemptions& out) {
  section.words("users", out.users);
  section.words("accounts", out.accounts);
  section.words("partitions", out.partitions);
  section.words("qos", out.qos);
  section.done();
}

void read_steps(Section& section, Escalation& out) {
  section.duration("first_warning", out.first_warning_s, true);
  section.duration("second_warning", out.second_warning_s, true);
  section.duration("cancel", out.cancel_s, true);
  const auto before = [](const std::optional<std::int64_t>& a,
                         const std::optional<std::int64_t>& b) { return !a || !b || *a < *b; };
  if (!before(out.first_warning_s, out.second_warning_s) ||
      !before(out.second_warning_s, out.cancel_s) || !before(out.first_warning_s, out.cancel_s)) {
    section.fail(section.at("first_warning"),
                 "and the steps after it must come in order: first_warning < second_warning < "
                 "cancel");
  }
}

void read_idle(Section section, IdleRule& out) {
  section.flag("enabled", out.enabled);
  section.number("activity_pct", out.activity_pct, 0, 100, " %");
  section.number("gpu_share", out.gpu_share, 0.01, 1, "");
  read_steps(section, out.steps);
  section.duration("min_age", out.min_age_s);
  section.duration("notice", out.notice_s);
  section.words("partitions", out.partitions);
  read_exemptions(section.child("exempt"), out.exempt);
  Section interactive = section.child("interactive");
  interactive.words("names", out.interactive_names);
  read_steps(interactive, out.interactive_steps);
  interactive.done();
  Section templates = section.child("templates");
  templates.text("first_warning", out.first_warning_template);
  templates.text("second_warning", out.second_warning_template);
  templates.text("cancel", out.cancel_template);
  templates.done();
  section.done();
}

void read_too_large(Section section, TooLargeRule& out) {
  section.flag("enabled", out.enabled);
  section.number("memory_share", out.memory_share, 0.01, 1, "");
  section.number("activity_pct", out.activity_pct, 0, 100, " %");
  section.duration("after", out.after_s);
  section.text("template", out.template_file);
  section.done();
}

void read_health(Section section, HealthRule& out) {
  section.flag("enabled", out.enabled);
  std::vector<std::string> xids;
  section.words("xids", xids);
  if (section.has("xids")) {
    out.xids.clear();
    for (const auto& word : xids) {
      if (word.empty() || word.size() > 5 ||
          word.find_first_not_of("0123456789") != std::string::npos) {
        section.fail(section.at("xids"),
                     fmt::format("holds '{}', which is not an Xid number", word));
      }
      out.xids.push_back(static_cast<unsigned>(std::stoul(word)));
    }
  }
  section.flag("uncorrected_ecc", out.uncorrected_ecc);
  section.flag("row_remap_failure", out.row_remap_failure);
  section.flag("row_remap_pending", out.row_remap_pending);
  section.flag("lost_gpu", out.lost_gpu);
  section.number("max_drained_share", out.max_drained_share, 0, 1, "");
  section.count("dcgm_diag", out.dcgm_diag_level, 0, 4);
  section.done();
}

void read_notify(Section section, NotifySettings& out) {
  section.flag("stdout", out.stdout_json);
  if (section.has("mail")) {
    Section mail = section.child("mail");
    MailSettings m;
    mail.text("smtp", m.smtp_url);
    mail.text("program", m.program);
    mail.text("from", m.from);
    mail.text("domain", m.domain);
    mail.text("credentials", m.credentials);
    mail.text("ca_file", m.ca_file);
    if (m.smtp_url.empty() == m.program.empty()) {
      mail.fail(section.at("mail"), "needs one of smtp (a URL) or program (sendmail's path)");
    }
    if (!m.smtp_url.empty() && m.smtp_url.rfind("smtp://", 0) != 0 &&
        m.smtp_url.rfind("smtps://", 0) != 0) {
      mail.fail(mail.at("smtp"), "must begin smtp:// (STARTTLS) or smtps:// (TLS)");
    }
    if (m.from.empty()) mail.fail(section.at("mail"), "needs from (the sender's address)");
    mail.done();
    out.mail = m;
  }
  if (section.has("webhook")) {
    Section hook = section.child("webhook");
    WebhookSettings w;
    hook.text("url_file", w.url_file);
    hook.text("token_file", w.token_file);
    hook.text("ca_file", w.ca_file);
    if (w.url_file.empty())
      hook.fail(section.at("webhook"), "needs url_file (the URL kept in a file)");
    hook.done();
    out.webhook = w;
  }
  section.words("admins", out.admins);
  section.flag("copy_warnings_to_admins", out.copy_warnings_to_admins);
  section.count("max_per_user_per_day", out.max_per_user_per_day, 1, 1000);
  section.count("digest_hour", out.digest_hour, -1, 23);
  section.done();
}

}  // namespace

std::optional<std::int64_t> parse_duration_s(const std::string& text) {
  static const std::regex kDuration(
      R"((?:(\d{1,6})d)?(?:(\d{1,6})h)?(?:(\d{1,7})m)?(?:(\d{1,9})s)?)");
  std::smatch match;
  if (text.empty()) return std::nullopt;
  if (text.find_first_not_of("0123456789") == std::string::npos && text.size() <= 9) {
    return std::stoll(text);
  }
  if (!std::regex_match(text, match, kDuration)) return std::nullopt;
  const std::int64_t scale[] = {86'400, 3600, 60, 1};
  std::int64_t total = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    if (match[i + 1].matched) total += std::stoll(match[i + 1].str()) * scale[i];
  }
  return total;
}

Rules parse_rules(const YamlDocument& document) {
  Rules rules;
  rules.path = document.name;
  Section top(document, "");
  if (!document.value.is_object()) top.fail("", "holds no rules (a mapping of keys is expected)");
  top.flag("enforce", rules.enforce);
  top.text("cluster", rules.cluster);
  top.text("state", rules.state);
  top.text("audit_log", rules.audit_log);
  top.duration("interval", rules.interval_s);
  top.duration("sample_interval", rules.sample_interval_s);
  top.count("max_cancels_per_cycle", rules.max_cancels_per_cycle, 0, 100'000);
  top.count("max_drains_per_cycle", rules.max_drains_per_cycle, 0, 10'000);
  read_idle(top.child("idle"), rules.idle);
  read_too_large(top.child("too_large"), rules.too_large);
  read_health(top.child("health"), rules.health);
  read_notify(top.child("notify"), rules.notify);
  top.done();
  if (rules.sample_interval_s * 2 > rules.idle.steps.first_warning_s.value_or(INT64_MAX)) {
    top.fail("/sample_interval", "must be at most half of idle.first_warning");
  }
  return rules;
}

Rules read_rules(const std::string& path) {
  return parse_rules(read_yaml_file(path));
}

}  // namespace gpuscope::guard
