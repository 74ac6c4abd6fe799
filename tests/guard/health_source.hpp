// A tsdb::Source for the health part of guard's cycle: it answers each query read_gpu_health
// sends (told apart by the function and the series name in it, and for the utilization counts
// by the range: the whole window or its last part) with series given by hand, and keeps every
// expression asked.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tsdb/source.hpp"

namespace gpuscope::guard::testing {

class HealthSource : public tsdb::Source {
 public:
  // `what`: "last:NAME", "max:NAME", "increase:NAME", "rise:NAME", "changes:NAME",
  // "count:NAME" (the whole window) or "recent:NAME" (its last part).
  std::map<std::string, std::vector<tsdb::Series>> answers;
  std::vector<std::string> asked;
  std::int64_t recent_range_ms = 0;  // the range of the "recent" counts
  bool fail = false;

  void add(const std::string& what, tsdb::Labels labels, double value) {
    answers[what].push_back({std::move(labels), {{0, value}}});
  }

  tsdb::ServerInfo server() override { return {}; }
  std::vector<tsdb::Labels> series(const std::string&, const tsdb::Window&) override {
    throw std::logic_error("the health asks no series");
  }
  std::vector<tsdb::Series> raw(const std::string&, const tsdb::Window&, std::size_t) override {
    throw std::logic_error("the health pulls no samples");
  }
  std::vector<tsdb::Series> range(const std::string&, const tsdb::Window&, std::int64_t) override {
    throw std::logic_error("the health asks no range query");
  }
  std::vector<std::string> warnings() const override { return {}; }

  std::vector<tsdb::Series> instant(const std::string& expr, std::int64_t) override {
    asked.push_back(expr);
    if (fail) throw Error("the monitoring server answered 503 Service Unavailable");
    const auto found = answers.find(key(expr));
    return found == answers.end() ? std::vector<tsdb::Series>{} : found->second;
  }

 private:
  std::string key(const std::string& expr) const {
    const auto name_after = [&](const std::string& fn) {
      const std::size_t at = expr.find(fn + "(");
      const std::size_t from = at + fn.size() + 1;
      return expr.substr(from, expr.find_first_of("{[", from) - from);
    };
    if (expr.find("last_over_time(") != std::string::npos)
      return "last:" + name_after("last_over_time");
    if (expr.find("increase(") != std::string::npos) return "increase:" + name_after("increase");
    if (expr.find("changes(") != std::string::npos) return "changes:" + name_after("changes");
    if (expr.find("min_over_time(") != std::string::npos)
      return "rise:" + name_after("max_over_time");
    if (expr.find("max_over_time(") != std::string::npos)
      return "max:" + name_after("max_over_time");
    const std::string name = name_after("count_over_time");
    const bool recent =
        expr.find("[" + std::to_string(recent_range_ms) + "ms]") != std::string::npos;
    return (recent ? "recent:" : "count:") + name;
  }
};

}  // namespace gpuscope::guard::testing
