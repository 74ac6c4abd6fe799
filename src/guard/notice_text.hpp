// The words of guard's notices: a template per step (a site's file, or the built-in text) with
// {{placeholders}} filled in one pass. Values come from users (job names, user names), so each is
// cleaned before it goes in: control characters (a newline that would start a mail header among
// them) removed, cut at 200 characters, and never read again as a template. A template naming a
// placeholder gpuscope does not know is refused with its line.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::guard {

// The placeholders a template may use.
inline constexpr std::string_view kPlaceholders[] = {
    "user",    "job",  "job_name",  "cluster",        "partition",
    "account", "gpus", "idle_gpus", "idle_for",       "next_step",
    "why",     "node", "reason",    "report_command", "scancel_command"};

struct NoticeTemplate {
  std::string source;   // the file, or "built-in"
  std::string subject;  // the first line's "Subject: ...", else the built-in subject
  std::string body;
};

struct Notice {
  std::string subject;  // one line
  std::string body;
};

// Parses a template file's text. Throws Error::usage naming `source` and the line of an unknown
// or unclosed placeholder.
NoticeTemplate parse_notice_template(const std::string& text, const std::string& source);

// The built-in template of `kind`: first_warning, second_warning, cancel, advice, drain,
// drain_held.
NoticeTemplate builtin_notice_template(const std::string& kind);

// The notice with `values` in place (a placeholder without a value: empty).
Notice render_notice(const NoticeTemplate& tmpl, const std::map<std::string, std::string>& values);

// A user-given value made safe to place: control characters dropped, at most 200 characters.
std::string clean_value(std::string_view value);

// A duration for people: "45 s" under two minutes, "17 min" under an hour and a half, then
// "2.5 h".
std::string duration_words(std::int64_t seconds);

// Text for Slack's and Mattermost's message formatting: &, < and > as &amp;, &lt; and &gt;.
std::string chat_escape(std::string_view text);

}  // namespace gpuscope::guard
