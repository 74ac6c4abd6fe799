// A tsdb::Source over series given by hand: series() and raw() answer by a minimal selector
// matcher ({a="b",c=~"d",e!="f"}, PromQL string escapes, (?i) regexes), range() evaluates
// avg_over_time / last_over_time of such a selector. Every selector and expression asked is
// recorded, so tests check what a real server would be sent.
#pragma once

#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tsdb/source.hpp"

namespace gpuscope::ingest::testing {

struct ParsedMatcher {
  std::string label, op, value;
};

// Parses {l op "v", ...}; throws std::invalid_argument on anything else (so a malformed
// selector fails the test).
inline std::vector<ParsedMatcher> parse_selector(const std::string& text) {
  std::vector<ParsedMatcher> out;
  std::size_t i = 0;
  if (text.empty() || text[i] != '{') throw std::invalid_argument("no { in " + text);
  ++i;
  while (i < text.size() && text[i] != '}') {
    ParsedMatcher m;
    while (i < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
      m.label += text[i++];
    }
    while (i < text.size() && (text[i] == '=' || text[i] == '!' || text[i] == '~'))
      m.op += text[i++];
    if (m.label.empty() || (m.op != "=" && m.op != "!=" && m.op != "=~" && m.op != "!~") ||
        i >= text.size() || text[i] != '"') {
      throw std::invalid_argument("bad matcher in " + text);
    }
    ++i;
    while (i < text.size() && text[i] != '"') {
      if (text[i] == '\\') {
        ++i;
        if (i >= text.size()) throw std::invalid_argument("bad escape in " + text);
        m.value += text[i] == 'n' ? '\n' : text[i];
      } else {
        m.value += text[i];
      }
      ++i;
    }
    if (i >= text.size()) throw std::invalid_argument("unterminated string in " + text);
    ++i;
    out.push_back(std::move(m));
    if (i < text.size() && text[i] == ',') ++i;
  }
  if (i + 1 != text.size()) throw std::invalid_argument("trailing text in " + text);
  return out;
}

// A matcher's regex compiled once (a batch's alternation of 500 ids is matched against every
// series of a query).
inline const std::regex& compiled(const std::string& pattern) {
  thread_local std::map<std::string, std::regex> cache;
  auto it = cache.find(pattern);
  if (it == cache.end()) {
    std::string re = pattern;
    auto flags = std::regex::ECMAScript;
    if (re.starts_with("(?i)")) re = re.substr(4), flags |= std::regex::icase;
    it = cache.emplace(pattern, std::regex(re, flags)).first;
  }
  return it->second;
}

inline bool matches(const tsdb::Labels& labels, const std::vector<ParsedMatcher>& ms) {
  for (const auto& m : ms) {
    const auto it = labels.find(m.label);
    const std::string v = it == labels.end() ? "" : it->second;
    if (m.op == "=" && v != m.value) return false;
    if (m.op == "!=" && v == m.value) return false;
    if (m.op == "=~" || m.op == "!~") {
      const bool hit = std::regex_match(v, compiled(m.value));
      if (hit != (m.op == "=~")) return false;
    }
  }
  return true;
}

class FakeSource : public tsdb::Source {
 public:
  std::vector<tsdb::Series> data;
  std::vector<std::string> asked;      // every selector or expression, in order
  std::vector<std::string> raw_asked;  // those of raw(), the samples pulled

  void add(tsdb::Labels labels, std::vector<tsdb::Point> points) {
    data.push_back({std::move(labels), std::move(points)});
  }

  tsdb::ServerInfo server() override {
    tsdb::ServerInfo s;
    s.kind = tsdb::ServerKind::VictoriaMetrics;
    s.url = "http://vm.test:8428";
    return s;
  }

  std::vector<tsdb::Labels> series(const std::string& sel, const tsdb::Window& w) override {
    asked.push_back(sel);
    std::vector<tsdb::Labels> out;
    for (const auto& s : pick(sel, w)) out.push_back(s.labels);
    return out;
  }

  std::vector<tsdb::Series> raw(const std::string& sel, const tsdb::Window& w,
                                std::size_t max_points) override {
    asked.push_back(sel);
    raw_asked.push_back(sel);
    auto out = pick(sel, w);
    std::size_t n = 0;
    for (const auto& s : out) n += s.points.size();
    if (n > max_points) throw std::runtime_error("too many points");
    return out;
  }

  // fn(SELECTOR[Ns]) with fn avg_over_time or last_over_time.
  std::vector<tsdb::Series> range(const std::string& expr, const tsdb::Window& w,
                                  std::int64_t step_ms) override {
    asked.push_back(expr);
    const auto open = expr.find('(');
    const auto bracket = expr.rfind('[');
    const std::string fn = expr.substr(0, open);
    const std::string sel = expr.substr(open + 1, bracket - open - 1);
    const std::int64_t range_ms = std::stoll(expr.substr(bracket + 1)) * 1000;
    std::vector<tsdb::Series> out;
    for (const auto& s : pick(sel, {w.start_ms - range_ms, w.end_ms})) {
      tsdb::Series r;
      r.labels = s.labels;
      r.labels.erase("__name__");
      for (std::int64_t t = w.start_ms; t <= w.end_ms; t += step_ms) {
        double sum = 0, last = 0;
        int n = 0;
        for (const auto& p : s.points) {
          if (p.t_ms > t - range_ms && p.t_ms <= t) sum += p.value, last = p.value, ++n;
        }
        if (n > 0) r.points.push_back({t, fn == "last_over_time" ? last : sum / n});
      }
      if (!r.points.empty()) out.push_back(std::move(r));
    }
    return out;
  }

  std::vector<tsdb::Series> instant(const std::string& expr, std::int64_t) override {
    asked.push_back(expr);
    return {};
  }
  std::vector<std::string> warnings() const override { return {}; }

 private:
  std::vector<tsdb::Series> pick(const std::string& sel, const tsdb::Window& w) const {
    const auto ms = parse_selector(sel);
    bool named = false;
    for (const auto& m : ms) named = named || (m.label == "__name__" && m.value != ".*");
    if (!named)
      throw std::invalid_argument("a selector without a name asks for everything: " + sel);
    std::vector<tsdb::Series> out;
    for (const auto& s : data) {
      if (!matches(s.labels, ms)) continue;
      tsdb::Series kept{s.labels, {}};
      for (const auto& p : s.points) {
        if (p.t_ms >= w.start_ms && p.t_ms <= w.end_ms) kept.points.push_back(p);
      }
      if (!kept.points.empty()) out.push_back(std::move(kept));
    }
    return out;
  }
};

}  // namespace gpuscope::ingest::testing
