#include "phases/output_phases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "core/error.hpp"
#include "core/regex_limits.hpp"

namespace gpuscope::phases {
namespace {

struct Spec {
  std::string name;  // empty: not given
  std::string pattern;
};

// NAME=REGEX when the text before the first '=' is a plain name (letters, digits, space, _ - . :
// /), else the whole text is the pattern.
Spec split_spec(const std::string& text) {
  const auto equals = text.find('=');
  if (equals != std::string::npos && equals > 0) {
    const std::string name = text.substr(0, equals);
    const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == ' ' || c == '_' || c == '-' ||
             c == '.' || c == ':' || c == '/';
    });
    if (plain && name.find_first_not_of(' ') != std::string::npos) {
      return {name, text.substr(equals + 1)};
    }
  }
  return {{}, text};
}

std::regex compile(const std::string& pattern, const std::string& option, const std::string& spec) {
  if (pattern.empty()) {
    throw Error::usage(fmt::format("{} '{}' has no pattern", option, spec), {},
                       "give NAME=REGEX or REGEX, e.g. --phase 'epoch=epoch (\\d+) start'");
  }
  if (const auto past = regex_past_limits(pattern)) {
    throw Error::usage(fmt::format("{} '{}' is too large a regular expression", option, spec),
                       *past, "give a shorter pattern with smaller counts");
  }
  try {
    return std::regex(pattern);
  } catch (const std::regex_error& e) {
    throw Error::usage(fmt::format("{} '{}' is not a valid regular expression", option, spec),
                       e.what(), "use ECMAScript syntax, e.g. --phase 'epoch=epoch (\\d+) start'");
  }
}

}  // namespace

std::string name_from_pattern(const std::string& pattern) {
  std::string out;
  for (const char c : pattern) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) break;
    out.push_back(c);
  }
  const auto first = out.find_first_not_of(' ');
  if (first == std::string::npos) return pattern;
  out.erase(0, first);
  out.erase(out.find_last_not_of(' ') + 1);
  return out;
}

std::vector<OutputPhasePattern> parse_output_phases(const std::vector<std::string>& begins,
                                                    const std::vector<std::string>& ends) {
  std::vector<OutputPhasePattern> out;
  std::set<std::string> names;
  for (const auto& text : begins) {
    Spec spec = split_spec(text);
    OutputPhasePattern p;
    p.begin = compile(spec.pattern, "--phase", text);
    p.begin_text = spec.pattern;
    p.name = spec.name.empty() ? name_from_pattern(spec.pattern) : spec.name;
    if (!names.insert(p.name).second) {
      throw Error::usage(
          fmt::format("--phase '{}': a phase named '{}' is already given", text, p.name), {},
          "give each --phase its own name: --phase NAME=REGEX");
    }
    out.push_back(std::move(p));
  }
  for (const auto& text : ends) {
    Spec spec = split_spec(text);
    const std::string name = spec.name.empty() ? name_from_pattern(spec.pattern) : spec.name;
    auto it = std::find_if(out.begin(), out.end(),
                           [&name](const OutputPhasePattern& p) { return p.name == name; });
    if (it == out.end()) {
      throw Error::usage(
          fmt::format("--phase-end '{}' ends '{}', which no --phase begins", text, name), {},
          "name the phase it ends: --phase-end NAME=REGEX with the NAME of a --phase");
    }
    if (it->end) {
      throw Error::usage(fmt::format("--phase-end '{}': '{}' already has an end", text, name));
    }
    it->end = compile(spec.pattern, "--phase-end", text);
    it->end_text = spec.pattern;
  }
  return out;
}

OutputPhaseMatcher::OutputPhaseMatcher(std::vector<OutputPhasePattern> patterns,
                                       PhaseTracker& tracker)
    : patterns_(std::move(patterns)), counts_(patterns_.size(), 0), tracker_(tracker) {}

void OutputPhaseMatcher::on_line(const std::string& text, std::int64_t mono_ns) {
  const auto end_of_match = matched_end(text);
  for (std::size_t i = 0; i < patterns_.size(); ++i) {
    const OutputPhasePattern& p = patterns_[i];
    std::smatch match;
    // An end first: a line that ends one epoch and begins the next does both, in that order.
    if (p.end && std::regex_search(text.begin(), end_of_match, match, *p.end)) {
      PhaseEdge edge{PhaseSource::Output, p.name, {}, std::nullopt, std::nullopt, mono_ns};
      tracker_.end(edge);
    }
    if (std::regex_search(text.begin(), end_of_match, match, p.begin)) {
      tracker_.end_all(PhaseSource::Output, p.name, mono_ns);
      ++counts_[i];
      std::string instance =
          match.size() > 1 && match[1].matched ? match[1].str() : std::to_string(counts_[i]);
      tracker_.begin(
          {PhaseSource::Output, p.name, std::move(instance), std::nullopt, std::nullopt, mono_ns});
    }
  }
}

void OutputPhaseMatcher::finish(std::int64_t mono_ns) {
  for (const auto& p : patterns_) {
    if (!p.end) tracker_.end_all(PhaseSource::Output, p.name, mono_ns);
  }
}

}  // namespace gpuscope::phases
