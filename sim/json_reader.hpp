// Strict reading of scenario JSON: every key of an object must be known (a typo is an error, with
// a suggestion), every value has a type and a range, and every error names its JSON pointer.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "util/json_depth.hpp"

namespace gpuscope::sim {

// A scenario that cannot be used; what() is "<JSON pointer>: <what is wrong>".
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail_at(std::string_view pointer, std::string_view what);

// Shortest form of a number for messages: 700, 0.55, 1e+06.
std::string format_number(double value);

// An inclusive range; exclusive_min makes the lower bound strict (for "> 0").
struct Range {
  double min;
  double max;
  bool exclusive_min = false;
};

inline constexpr Range kPercent{0, 100};
inline constexpr Range kNonNegative{0, 1e18};
inline constexpr Range kPositive{0, 1e18, true};

class ObjectReader {
 public:
  // Fails unless value is an object. pointer is its JSON pointer ("" for the root).
  ObjectReader(const nlohmann::json& value, std::string pointer);

  const std::string& pointer() const { return pointer_; }
  std::string child(std::string_view key) const;
  bool has(std::string_view key) const;

  // The value under key, or nullptr if absent; either way the key counts as known.
  const nlohmann::json* find(std::string_view key);

  double number(std::string_view key, double fallback, Range range);
  double required_number(std::string_view key, Range range);
  std::optional<double> optional_number(std::string_view key, Range range);
  std::uint64_t unsigned_integer(std::string_view key, std::uint64_t fallback, std::uint64_t max);
  std::string string(std::string_view key, std::string fallback);
  std::optional<std::string> optional_string(std::string_view key);
  bool boolean(std::string_view key, bool fallback);

  // Fails on the first key that no accessor asked for ("comment" is always allowed).
  void finish() const;

 private:
  const nlohmann::json& value_;
  std::string pointer_;
  std::vector<std::string> known_;
};

// Checks a number already extracted from JSON against a range; fails with pointer.
double checked_number(const nlohmann::json& value, std::string_view pointer, Range range);

// The byte offset where text's arrays and objects first nest deeper than max_depth, if they do:
// util/json_depth.hpp, so that a deep scenario is refused before any parse or walk.
using util::nesting_past;

// The closest of candidates to word by edit distance, if close enough to be a likely typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

}  // namespace gpuscope::sim
