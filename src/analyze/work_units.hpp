// Work done by a job, from its output: the first group of every match of a pattern, summed
// (the rule of `gpuscope analyze --work-regex`, docs/analysis.md).
#pragma once

#include <optional>
#include <regex>
#include <string>

namespace gpuscope::analyze {

// The compiled pattern (ECMAScript). Throws Error::usage when it is not a valid regular
// expression or has no group, saying how to write one.
std::regex compile_work_regex(const std::string& pattern);

// The amount a line reports: the first group of the first match, as a number; nullopt when the
// line does not match or the group is not a number.
std::optional<double> work_in_line(const std::regex& regex, const std::string& line);

}  // namespace gpuscope::analyze
