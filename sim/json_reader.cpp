#include "sim/json_reader.hpp"

#include <algorithm>
#include <cstdio>

namespace gpuscope::sim {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string type_name(const nlohmann::json& value) {
  return value.type_name();
}

}  // namespace

void fail_at(std::string_view pointer, std::string_view what) {
  std::string message(pointer.empty() ? std::string_view("/") : pointer);
  message += ": ";
  message += what;
  throw ScenarioError(message);
}

std::string format_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", value);
  return buffer;
}

double checked_number(const nlohmann::json& value, std::string_view pointer, Range range) {
  if (!value.is_number()) fail_at(pointer, "expected a number, got " + type_name(value));
  const auto number = value.get<double>();
  const bool below = range.exclusive_min ? number <= range.min : number < range.min;
  if (below || number > range.max) {
    std::string what = format_number(number) + " is out of range: must be ";
    what += range.exclusive_min ? "> " : ">= ";
    what += format_number(range.min);
    if (range.max < 1e18) what += " and <= " + format_number(range.max);
    fail_at(pointer, what);
  }
  return number;
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

ObjectReader::ObjectReader(const nlohmann::json& value, std::string pointer)
    : value_(value), pointer_(std::move(pointer)) {
  if (!value_.is_object()) fail_at(pointer_, "expected an object, got " + type_name(value_));
}

std::string ObjectReader::child(std::string_view key) const {
  return pointer_ + "/" + std::string(key);
}

bool ObjectReader::has(std::string_view key) const {
  return value_.contains(key);
}

const nlohmann::json* ObjectReader::find(std::string_view key) {
  known_.emplace_back(key);
  const auto it = value_.find(key);
  return it == value_.end() ? nullptr : &*it;
}

double ObjectReader::number(std::string_view key, double fallback, Range range) {
  return optional_number(key, range).value_or(fallback);
}

double ObjectReader::required_number(std::string_view key, Range range) {
  const std::optional<double> value = optional_number(key, range);
  if (!value) fail_at(pointer_, "missing required key \"" + std::string(key) + "\"");
  return *value;
}

std::optional<double> ObjectReader::optional_number(std::string_view key, Range range) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return std::nullopt;
  return checked_number(*value, child(key), range);
}

std::uint64_t ObjectReader::unsigned_integer(std::string_view key, std::uint64_t fallback,
                                             std::uint64_t max) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return fallback;
  if (!value->is_number_unsigned()) {
    fail_at(child(key), "expected a non-negative integer, got " + value->dump());
  }
  const auto number = value->get<std::uint64_t>();
  if (number > max) {
    fail_at(child(key),
            std::to_string(number) + " is out of range: must be <= " + std::to_string(max));
  }
  return number;
}

std::string ObjectReader::string(std::string_view key, std::string fallback) {
  return optional_string(key).value_or(std::move(fallback));
}

std::optional<std::string> ObjectReader::optional_string(std::string_view key) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) fail_at(child(key), "expected a string, got " + type_name(*value));
  return value->get<std::string>();
}

bool ObjectReader::boolean(std::string_view key, bool fallback) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) fail_at(child(key), "expected true or false, got " + value->dump());
  return value->get<bool>();
}

void ObjectReader::finish() const {
  for (const auto& [key, unused] : value_.items()) {
    if (key == "comment") continue;
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::string what = "unknown key \"" + key + "\"";
    if (const auto suggestion = closest_match(key, known_)) {
      what += " (did you mean \"" + *suggestion + "\"?)";
    } else {
      what += " (known keys:";
      for (const std::string& known : known_) what += " " + known;
      what += ")";
    }
    fail_at(pointer_, what);
  }
}

}  // namespace gpuscope::sim
