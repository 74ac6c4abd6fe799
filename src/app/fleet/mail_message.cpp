#include "app/fleet/mail_message.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <sstream>

#include "core/error.hpp"
#include "tsdb/site.hpp"
#include "util/number_text.hpp"
#include "util/secret_text.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::app {
namespace {

// What slurmctld writes for each kind of mail (its _mail_type_str).
constexpr std::array<std::string_view, 10> kMailTypes = {"Began",
                                                         "Ended",
                                                         "Failed",
                                                         "Requeued",
                                                         "StageOut/Teardown",
                                                         "Reached time limit",
                                                         "Reached 90% of time limit",
                                                         "Reached 80% of time limit",
                                                         "Reached 50% of time limit",
                                                         "Invalid dependency"};

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool consume(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// Where the mail type begins in "NAME TYPE[SUFFIX]" (the last that fits), and which; npos when
// none does.
std::pair<std::size_t, std::string_view> find_mail_type(std::string_view rest) {
  std::size_t best = std::string_view::npos;
  std::string_view type;
  for (const std::string_view t : kMailTypes) {
    std::size_t at = rest.size();
    while (at > 0) {
      const std::size_t pos = rest.rfind(t, at - 1);
      if (pos == std::string_view::npos) break;
      const std::size_t after = pos + t.size();
      const bool starts = pos > 0 && rest[pos - 1] == ' ';  // "Name=%s %s"
      const std::string_view tail = rest.substr(after);
      const bool ends = tail.empty() || tail.front() == ',' ||
                        (t == "StageOut/Teardown" && tail.starts_with(" time"));
      if (starts && ends) {
        if (best == std::string_view::npos || pos > best) best = pos, type = t;
        break;
      }
      at = pos;
    }
  }
  return {best, type};
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A header's value on one line: control characters (CR and LF above all) as spaces.
std::string header_safe(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return out;
}

bool plain_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// RFC 2047 encoded words of at most 45 bytes each (60 of base64), never cutting a UTF-8
// character, folded onto continuation lines.
std::string encoded_words(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t n = std::min<std::size_t>(45, text.size() - i);
    while (n > 1 && i + n < text.size() &&
           (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) {
      --n;
    }
    parts.push_back("=?UTF-8?B?" + util::base64(text.substr(i, n)) + "?=");
    i += n;
  }
  return fmt::format("{}", fmt::join(parts, "\n "));
}

}  // namespace

std::optional<SlurmSubject> parse_slurm_subject(std::string_view subject) {
  SlurmSubject out;
  std::string_view s = subject;
  bool array = true;
  if (consume(s, "Slurm Job_id=")) {
    array = false;
  } else if (consume(s, "Slurm Array Summary Job_id=")) {
    out.array_summary = true;
  } else if (!consume(s, "Slurm Array Task Job_id=")) {
    return std::nullopt;
  }
  const std::size_t space = s.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  out.shown_id = std::string(s.substr(0, space));
  s.remove_prefix(space);
  if (array) {
    const std::size_t close = s.find(')');
    if (!consume(s, " (") || close == std::string_view::npos) return std::nullopt;
    out.job_id = std::string(s.substr(0, close - 2));
    s.remove_prefix(close - 1);
  } else {
    out.job_id = out.shown_id;
  }
  if (!all_digits(out.job_id) || !consume(s, " Name=")) return std::nullopt;
  const auto [at, type] = find_mail_type(s);
  if (at == std::string_view::npos) {
    out.name = std::string(s);
    return out;
  }
  out.name = std::string(s.substr(0, at - 1));
  out.mail_type = std::string(type);
  return out;
}

SlurmMail read_slurm_mail(const std::vector<std::string>& arguments, const util::EnvLookup& env) {
  SlurmMail mail;
  mail.arguments = arguments;
  bool options = true;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& a = arguments[i];
    if (options && a == "-s" && i + 1 < arguments.size()) {
      mail.subject = arguments[++i];
    } else if (options && a.starts_with("-s") && a.size() > 2) {
      mail.subject = a.substr(2);
    } else if (options && a == "--") {
      options = false;
    } else if (!options || !a.starts_with("-")) {
      mail.recipients.push_back(a);
    }
  }
  const auto subject = parse_slurm_subject(mail.subject);
  if (subject) {
    mail.job_id = subject->job_id;
    mail.mail_type = subject->mail_type;
    mail.array_summary = subject->array_summary;
  }
  if (const auto id = env("SLURM_JOB_ID"); id && all_digits(*id)) mail.job_id = *id;
  if (const auto type = env("SLURM_JOB_MAIL_TYPE"); type && !type->empty()) {
    mail.mail_type = *type;
  }
  return mail;
}

bool is_end_of_job(const SlurmMail& mail) {
  return !mail.job_id.empty() && !mail.array_summary &&
         (mail.mail_type == "Ended" || mail.mail_type == "Failed");
}

std::string default_mail_program(bool (*exists)(const std::string&)) {
  for (const char* p : {"/usr/bin/mail.mailutils", "/usr/bin/mail", "/usr/bin/mailx"}) {
    if (exists(p)) return p;
  }
  return {};
}

MailInterface interface_of(const std::string& program) {
  const std::string name = program.substr(program.find_last_of('/') + 1);
  return name == "sendmail" || name.starts_with("msmtp") ? MailInterface::Sendmail
                                                         : MailInterface::Mail;
}

namespace {

constexpr const char* kConfigHint = "the keys are docs/fleet.md's, \"The end-of-job mail\"";

double number_value(const std::string& key, const std::string& value, const std::string& where,
                    double low, double high) {
  const auto v = util::parse_finite_number(value);
  if (!v || *v < low || *v > high) {
    throw Error(fmt::format("{}: {} '{}' is not a number between {} and {}", where, key,
                            util::visible(value), low, high),
                {}, fmt::format("fix the line ({})", kConfigHint));
  }
  return *v;
}

void set_key(MailConfig& c, const std::string& key, const std::string& value,
             const std::string& where, bool& interface_given) {
  auto bad = [&](const std::string& why) {
    return Error(fmt::format("{}: {} '{}' {}", where, key, util::visible(value), why), {},
                 fmt::format("fix the line ({})", kConfigHint));
  };
  if (key == "mail_program") {
    if (!value.starts_with("/")) throw bad("is not an absolute path");
    c.mail_program = value;
  } else if (key == "mail_arguments") {
    c.mail_arguments = words(value);
  } else if (key == "mail_interface") {
    if (value != "mail" && value != "sendmail") throw bad("is neither mail nor sendmail");
    c.interface = value == "mail" ? MailInterface::Mail : MailInterface::Sendmail;
    interface_given = true;
  } else if (key == "timeout") {
    const auto t = tsdb::parse_timeout(value);
    // slurmctld gives MailProg 120 s in all: the mail itself needs some of them.
    if (!t || *t < std::chrono::seconds(1) || *t > std::chrono::seconds(100)) {
      throw bad("is not a time from 1s to 100s");
    }
    c.timeout = *t;
  } else if (key == "settle") {
    const bool zero = value == "0" || value == "0s";
    const auto t = zero ? std::chrono::milliseconds(0) : tsdb::parse_timeout(value);
    if (!t || *t < std::chrono::milliseconds(0) || *t > std::chrono::seconds(60)) {
      throw bad("is not a time from 0s to 60s");
    }
    c.settle = *t;
  } else if (key == "prometheus_config") {
    c.prometheus_config = value;
  } else if (key == "sacct") {
    c.sacct = value;
  } else if (key == "region") {
    c.region = value;
  } else if (key == "carbon_intensity") {
    c.carbon_intensity = number_value(key, value, where, 0, 5000);
  } else if (key == "pue") {
    c.pue = number_value(key, value, where, 1, 5);
  } else {
    throw Error(fmt::format("{}: unknown key '{}'", where, util::visible(key)), {},
                "the keys are mail_program, mail_arguments, mail_interface, timeout, settle, "
                "prometheus_config, sacct, region, carbon_intensity and pue (docs/fleet.md)");
  }
}

}  // namespace

MailConfig parse_mail_config(const std::string& text, const std::string& path,
                             const std::string& fallback_program) {
  MailConfig c;
  c.path = path;
  bool interface_given = false;
  std::istringstream in(text);
  int number = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++number;
    const std::string line = trim(raw);
    if (line.empty() || line.starts_with("#")) continue;
    const std::string where = fmt::format("{}:{}", path, number);
    const auto eq = line.find('=');
    if (eq == std::string::npos) {
      throw Error(fmt::format("{}: '{}' is not a key = value line", where, util::visible(line)), {},
                  fmt::format("fix the line ({})", kConfigHint));
    }
    set_key(c, trim(line.substr(0, eq)), trim(line.substr(eq + 1)), where, interface_given);
  }
  if (c.mail_program.empty()) c.mail_program = fallback_program;
  if (c.mail_program.empty()) {
    throw Error(fmt::format("{} names no mail_program and no mail program is installed",
                            path.empty() ? std::string("gpuscope mail") : path),
                "none of /usr/bin/mail.mailutils, /usr/bin/mail, /usr/bin/mailx exists",
                "set mail_program = the site's mail program (mailutils' mail, or msmtp)");
  }
  if (!interface_given) c.interface = interface_of(c.mail_program);
  if (c.settle >= c.timeout) {
    throw Error(fmt::format("{}: settle is not shorter than timeout", path), {},
                "the wait for the last scrapes counts within the timeout: make it shorter");
  }
  return c;
}

std::string sendmail_message(const SlurmMail& mail, const std::string& body) {
  std::vector<std::string> to;
  for (const auto& r : mail.recipients) to.push_back(header_safe(r));
  const std::string subject = header_safe(mail.subject);
  std::string out = fmt::format("To: {}\n", fmt::join(to, ", "));
  out += "Subject: ";
  out += plain_ascii(subject) && subject.size() <= 900 ? subject : encoded_words(subject);
  out +=
      "\nAuto-Submitted: auto-generated\nMIME-Version: 1.0\n"
      "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n\n";
  out += body;
  if (!body.empty() && body.back() != '\n') out += '\n';
  return out;
}

}  // namespace gpuscope::app
