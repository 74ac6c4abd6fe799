// PromQL text built safely: label values quoted as PromQL string literals, regular expressions
// escaped, selectors of label matchers, durations in the form every server reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuscope::tsdb {

// `value` as a double-quoted PromQL string literal: backslash, quote and control characters
// escaped ("a\"b" for a"b).
std::string quote(std::string_view value);

// name{k1="v1",k2="v2"} (or {…} with an empty name): exact matches, values quoted.
std::string selector(std::string_view name,
                     const std::vector<std::pair<std::string, std::string>>& matches);

// `text` with the regular-expression metacharacters escaped, for a =~ matcher (RE2 syntax).
std::string regex_quote(std::string_view text);

// One label matcher of a selector.
struct Matcher {
  std::string label;
  std::string op;  // "=", "!=", "=~", "!~"
  std::string value;
};
// {label="value",...} with every value quoted.
std::string selector(const std::vector<Matcher>& matchers);

// A duration in whole seconds, e.g. "2678400s" (every PromQL dialect reads it).
std::string duration(std::int64_t ms);

}  // namespace gpuscope::tsdb
