#include "guard/notice_text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace gpuscope::guard {
namespace {

bool known(std::string_view name) {
  return std::find(std::begin(kPlaceholders), std::end(kPlaceholders), name) !=
         std::end(kPlaceholders);
}

// Checks every {{name}} of `text` (starting at `first_line`) against the known names.
void check_placeholders(const std::string& text, const std::string& source, int first_line) {
  int line = first_line;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
    if (text.compare(i, 2, "{{") != 0) continue;
    const std::size_t end = text.find("}}", i + 2);
    const std::size_t newline = text.find('\n', i);
    if (end == std::string::npos || (newline != std::string::npos && newline < end)) {
      throw Error::usage(fmt::format("{} line {}: a {{{{ without its }}}}", source, line), {},
                         "close the placeholder, e.g. {{job}} (docs/guard.md, \"Notices\")");
    }
    const std::string name = text.substr(i + 2, end - i - 2);
    if (!known(name)) {
      throw Error::usage(fmt::format("{} line {}: {{{{{}}}}} is not a placeholder gpuscope knows",
                                     source, line, name),
                         {}, "see docs/guard.md, \"Notices\", for the placeholders");
    }
    i = end + 1;
  }
}

constexpr std::string_view kFirst =
    "Subject: [{{cluster}}] Your job {{job}} is not using its GPUs\n"
    "Hello {{user}},\n\n"
    "Your job {{job}} ({{job_name}}, partition {{partition}}) holds {{gpus}} GPUs, and "
    "{{idle_gpus}} "
    "of them have shown no activity for {{idle_for}}.\n\n"
    "If the job does not need its GPUs, please end it ({{scancel_command}}) so that others can "
    "use them. {{next_step}}\n\n"
    "What was measured: {{why}}\nThe job's full report: {{report_command}}\n";
constexpr std::string_view kSecond =
    "Subject: [{{cluster}}] Second notice: job {{job}} is still not using its GPUs\n"
    "Hello {{user}},\n\n"
    "This is a second notice. {{idle_gpus}} of the {{gpus}} GPUs of your job {{job}} "
    "({{job_name}}) have shown no activity for {{idle_for}}. {{next_step}}\n\n"
    "What was measured: {{why}}\nThe job's full report: {{report_command}}\n";
constexpr std::string_view kCancel =
    "Subject: [{{cluster}}] Job {{job}} was cancelled: its GPUs were idle\n"
    "Hello {{user}},\n\n"
    "Your job {{job}} ({{job_name}}, partition {{partition}}) was cancelled because {{idle_gpus}} "
    "of its {{gpus}} GPUs showed no activity for {{idle_for}}, after the warnings you were "
    "sent.\n\nWhat was measured: {{why}}\nThe job's full report: {{report_command}}\n";
constexpr std::string_view kAdvice =
    "Subject: [{{cluster}}] Job {{job}} could run on a smaller GPU\n"
    "Hello {{user}},\n\n"
    "Your job {{job}} ({{job_name}}) holds {{gpus}} GPUs, but {{why}}. Requesting a MIG slice "
    "or a smaller GPU would leave the large ones to jobs that need them, and your job may start "
    "sooner.\n\nThe job's full report: {{report_command}}\n";
constexpr std::string_view kDrain =
    "Subject: [{{cluster}}] Node {{node}} drained: {{reason}}\n"
    "gpuscope guard drained node {{node}}: {{reason}}.\n\nWhat was measured: {{why}}\n"
    "When the GPU is repaired: scontrol update NodeName={{node}} State=RESUME\n";
constexpr std::string_view kDrainHeld =
    "Subject: [{{cluster}}] Node {{node}} has a broken GPU and was not drained\n"
    "gpuscope guard found a broken GPU on node {{node}} ({{reason}}) and did not drain it: "
    "{{why}}.\n\nDrain it yourself if it should not take jobs: scontrol update "
    "NodeName={{node}} State=DRAIN Reason=\"...\"\n";

}  // namespace

NoticeTemplate parse_notice_template(const std::string& text, const std::string& source) {
  NoticeTemplate out;
  out.source = source;
  std::string body = text;
  int first_body_line = 1;
  if (body.rfind("Subject:", 0) == 0) {
    const std::size_t end = body.find('\n');
    out.subject = body.substr(8, end == std::string::npos ? std::string::npos : end - 8);
    out.subject.erase(0, out.subject.find_first_not_of(' '));
    check_placeholders(out.subject, source, 1);
    body = end == std::string::npos ? std::string() : body.substr(end + 1);
    first_body_line = 2;
  }
  check_placeholders(body, source, first_body_line);
  out.body = body;
  return out;
}

NoticeTemplate builtin_notice_template(const std::string& kind) {
  std::string_view text = kDrain;
  if (kind == "first_warning") text = kFirst;
  if (kind == "second_warning") text = kSecond;
  if (kind == "cancel") text = kCancel;
  if (kind == "advice") text = kAdvice;
  if (kind == "drain_held") text = kDrainHeld;
  return parse_notice_template(std::string(text), "built-in");
}

std::string duration_words(std::int64_t seconds) {
  if (seconds < 120) return fmt::format("{} s", seconds);
  return seconds >= 5400 ? fmt::format("{:.1f} h", static_cast<double>(seconds) / 3600)
                         : fmt::format("{} min", seconds / 60);
}

std::string clean_value(std::string_view value) {
  std::string out;
  bool cut = false;
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) continue;
    if (out.size() >= 200) {
      cut = true;
      break;
    }
    out += c;
  }
  if (cut) {  // never end inside a UTF-8 sequence
    std::size_t lead = out.size();
    while (lead > 0 && (static_cast<unsigned char>(out[lead - 1]) & 0xC0) == 0x80) --lead;
    if (lead > 0) {
      const auto first = static_cast<unsigned char>(out[lead - 1]);
      const std::size_t length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1;
      if (out.size() - (lead - 1) < length) out.erase(lead - 1);
    }
  }
  return out;
}

Notice render_notice(const NoticeTemplate& tmpl, const std::map<std::string, std::string>& values) {
  const auto fill = [&](const std::string& text) {
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t open = text.find("{{", at);
      if (open == std::string::npos) break;
      const std::size_t close = text.find("}}", open + 2);
      if (close == std::string::npos) break;
      out.append(text, at, open - at);
      const auto found = values.find(text.substr(open + 2, close - open - 2));
      if (found != values.end()) out += clean_value(found->second);
      at = close + 2;
    }
    out.append(text, at, std::string::npos);
    return out;
  };
  return {clean_value(fill(tmpl.subject)), fill(tmpl.body)};
}

std::string chat_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace gpuscope::guard
