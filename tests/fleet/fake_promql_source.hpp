// A tsdb::Source that answers the instant queries read_gpu_aggregates sends from series given
// by hand, evaluating each as a server would. Two shapes: a batch's query for the jobs a label
// names, one reduction of one selector (`L=~"id|id|..."`, a list label's
// `(.*,)?(id|...)(,.*)?`) over the batch's `[<n>ms] @ <s>` span, grouped `by (...)` the GPU's
// labels and the job label; and per-job pieces `label_replace(<piece>, "gpuscope_job", "<id>",
// "", "")` joined with `or`, each over its own window (or jobstats' job-id series compared with
// a job's id at an instant). It reads the expression's shape (promql_text.hpp), so a label value
// that escaped its string fails the test. Prometheus' idle share (a subquery on a grid) is
// evaluated on the stored samples, as VictoriaMetrics' is. `max_ids` refuses, as a server's
// limit would (tsdb::LimitError), a query naming more jobs than that.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "ingest/fake_source.hpp"
#include "promql_text.hpp"
#include "tsdb/client.hpp"
#include "tsdb/source.hpp"

namespace gpuscope::fleet::testing {

class FakePromqlSource : public tsdb::Source {
 public:
  tsdb::ServerKind kind = tsdb::ServerKind::VictoriaMetrics;
  std::vector<tsdb::Series> data;
  std::vector<std::string> asked;      // every expression, in order
  std::optional<std::size_t> fail_at;  // the instant query (0-based) the server fails
  std::optional<std::size_t> max_ids;  // more jobs in one query are refused for a limit
  std::size_t refused = 0;             // queries refused for max_ids

  void add(tsdb::Labels labels, std::vector<tsdb::Point> points) {
    data.push_back({std::move(labels), std::move(points)});
  }

  tsdb::ServerInfo server() override {
    tsdb::ServerInfo s;
    s.kind = kind;
    s.url = "http://tsdb.test:9090";
    return s;
  }
  std::vector<tsdb::Labels> series(const std::string&, const tsdb::Window&) override {
    throw std::logic_error("the aggregates ask no series");
  }
  std::vector<tsdb::Series> raw(const std::string&, const tsdb::Window&, std::size_t) override {
    throw std::logic_error("the aggregates pull no samples");
  }
  std::vector<tsdb::Series> range(const std::string&, const tsdb::Window&, std::int64_t) override {
    throw std::logic_error("the aggregates ask no range query");
  }
  std::vector<std::string> warnings() const override { return {}; }

  std::vector<tsdb::Series> instant(const std::string& expr, std::int64_t time_ms) override {
    if (fail_at && asked.size() == *fail_at) {
      asked.push_back(expr);
      throw Error("the monitoring server answered 503 Service Unavailable");
    }
    asked.push_back(expr);
    const PromqlText text = lex_promql(expr);
    if (max_ids && ids_named(text) > *max_ids) {
      ++refused;
      throw tsdb::LimitError("the monitoring server answered 422: too long query");
    }
    std::vector<tsdb::Series> out;
    if (text.shape.find("label_match(") != std::string::npos) {  // MetricsQL: every name at once
      out = evaluate_metricsql(text.shape, text.strings);
      for (auto& s : out) s.points = {{time_ms, s.points.front().value}};
      return out;
    }
    if (text.shape.rfind(kLabelReplace, 0) != 0) {  // a batch's query: one reduction
      try {
        out = evaluate(text.shape, text.strings);
      } catch (const std::out_of_range& e) {
        throw std::invalid_argument(std::string(e.what()) + " reading " + expr);
      }
      for (auto& s : out) s.points = {{time_ms, s.points.front().value}};
      return out;
    }
    std::string rebuilt;
    for (std::size_t at = 0; at < text.shape.size();) {
      if (!rebuilt.empty()) rebuilt += " or ";
      const std::size_t close = closing(text.shape, at + kLabelReplace.size() - 1);
      const std::string call = text.shape.substr(at, close + 1 - at);
      rebuilt += call;
      evaluate_marked(call, text.strings, time_ms, out);
      at = close + 1;
      if (text.shape.compare(at, 4, " or ") == 0) at += 4;
    }
    if (rebuilt != text.shape) throw std::invalid_argument("not pieces joined with or: " + expr);
    return out;
  }

  // The alternatives of a batch's `=~` matcher on a job label, a list label's inside its
  // `(.*,)?(...)(,.*)?`: the ids asked (an escaped '|' is part of an id).
  static std::vector<std::string> regex_ids(const std::string& regex) {
    std::string alternation = regex;
    const std::string head = "(.*,)?(", tail = ")(,.*)?";
    if (alternation.starts_with(head) && alternation.ends_with(tail)) {
      alternation = alternation.substr(head.size(), alternation.size() - head.size() - tail.size());
    }
    std::vector<std::string> out(1);
    for (std::size_t i = 0; i < alternation.size(); ++i) {
      if (alternation[i] == '\\' && i + 1 < alternation.size()) {
        out.back() += alternation[++i];
      } else if (alternation[i] == '|') {
        out.emplace_back();
      } else {
        out.back() += alternation[i];
      }
    }
    return out;
  }

 private:
  // How many jobs a query names: its pieces, or its job label's alternatives.
  static std::size_t ids_named(const PromqlText& text) {
    if (text.shape.rfind(kLabelReplace, 0) == 0)
      return occurrences(text.shape, kLabelReplace.data());
    const auto at = text.shape.find("=~\"#");
    if (at == std::string::npos) return 0;
    const std::size_t n = std::stoul(text.shape.substr(at + 4));
    return regex_ids(text.strings.at(n)).size();
  }

  static constexpr std::string_view kLabelReplace = "label_replace(";

  struct Acc {
    double n = 0, sum = 0, le = 0, changes = 0, series = 0;
    double max = -INFINITY, min = INFINITY;
  };

  // The index of the ')' closing the '(' at `open`.
  static std::size_t closing(const std::string& shape, std::size_t open) {
    if (shape.compare(open - kLabelReplace.size() + 1, kLabelReplace.size(), kLabelReplace) != 0) {
      throw std::invalid_argument("expected label_replace( in " + shape);
    }
    int depth = 0;
    for (std::size_t i = open; i < shape.size(); ++i) {
      if (shape[i] == '(') ++depth;
      if (shape[i] == ')' && --depth == 0) return i;
    }
    throw std::invalid_argument("unclosed ( in " + shape);
  }

  static const std::string& literal(const std::string& token,
                                    const std::vector<std::string>& strings) {
    if (token.size() < 4 || token[0] != '"' || token[1] != '#' || token.back() != '"') {
      throw std::invalid_argument("not a string: " + token);
    }
    return strings.at(std::stoul(token.substr(2, token.size() - 3)));
  }

  // label_replace(<piece>, "gpuscope_job", "<id>", "", "") evaluated, the mark set.
  void evaluate_marked(const std::string& call, const std::vector<std::string>& strings,
                       std::int64_t time_ms, std::vector<tsdb::Series>& out) const {
    const std::string inner = call.substr(kLabelReplace.size(), call.size() - 15);
    std::vector<std::string> args;
    int depth = 0;
    std::string arg;
    for (const char c : inner) {
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (c == ',' && depth == 0) {
        args.push_back(arg);
        arg.clear();
        continue;
      }
      arg += c;
    }
    args.push_back(arg);
    if (args.size() != 5) {
      throw std::invalid_argument("label_replace with " + std::to_string(args.size()) +
                                  " arguments: " + call);
    }
    const std::string& mark = literal(args[1].substr(1), strings);
    const std::string& id = literal(args[2].substr(1), strings);
    if (!literal(args[3].substr(1), strings).empty() ||
        !literal(args[4].substr(1), strings).empty()) {
      throw std::invalid_argument("label_replace that is not a constant label: " + call);
    }
    std::vector<tsdb::Series> answer;
    try {
      answer = evaluate(args[0], strings);
    } catch (const std::out_of_range& e) {
      throw std::invalid_argument(std::string(e.what()) + " reading the piece " + args[0]);
    }
    for (auto& s : answer) {
      s.labels[mark] = id;
      s.points = {{time_ms, s.points.front().value}};
      out.push_back(std::move(s));
    }
  }

  // `count by (<by>) (<name> @ <s> == <value>)`: the series of `name` whose latest sample at
  // the time (5 minutes back at most, Prometheus' lookback) equals the value, counted.
  std::vector<tsdb::Series> compared(const std::string& piece,
                                     const std::vector<std::string>& by) const {
    const auto open = piece.find(") (");
    const auto at_text = piece.find(" @ ");
    const auto eq = piece.find(" == ");
    if (piece.rfind("count by (", 0) != 0 || open == std::string::npos ||
        at_text == std::string::npos || eq == std::string::npos) {
      throw std::invalid_argument("a piece the fake server does not know: " + piece);
    }
    const std::string name = piece.substr(open + 3, at_text - open - 3);
    const auto at_ms =
        static_cast<std::int64_t>(std::llround(std::stod(piece.substr(at_text + 3)) * 1000));
    const double value = std::stod(piece.substr(eq + 4));
    std::map<tsdb::Labels, double> groups;
    for (const auto& s : data) {
      const auto it = s.labels.find("__name__");
      if (it == s.labels.end() || it->second != name) continue;
      std::optional<double> latest;
      for (const auto& p : s.points) {
        if (p.t_ms <= at_ms && p.t_ms > at_ms - 300'000) latest = p.value;
      }
      if (!latest || *latest != value) continue;
      tsdb::Labels key;
      for (const auto& l : by) {
        if (const auto v = s.labels.find(l); v != s.labels.end() && !v->second.empty()) {
          key[l] = v->second;
        }
      }
      groups[key] += 1;
    }
    std::vector<tsdb::Series> out;
    for (const auto& [key, n] : groups) out.push_back({key, {{0, n}}});
    return out;
  }

  // A selector's body `L=~"#n",M="#m"` as matchers, each value a literal.
  static std::vector<ingest::testing::ParsedMatcher> parse_matchers(
      const std::string& body, const std::vector<std::string>& strings) {
    std::vector<ingest::testing::ParsedMatcher> matchers;
    for (std::size_t b = 0; b < body.size();) {
      auto e = body.find(',', b);
      if (e == std::string::npos) e = body.size();
      const std::string m = body.substr(b, e - b);
      const auto op_at = m.find_first_of("=!");
      const auto quote_at = m.find('"');
      matchers.push_back({m.substr(0, op_at), m.substr(op_at, quote_at - op_at),
                          literal(m.substr(quote_at), strings)});
      b = e + 1;
    }
    return matchers;
  }

  // One series' samples in (at - range, at], reduced every way.
  static std::optional<Acc> series_acc(const tsdb::Series& s, std::int64_t at_ms,
                                       std::int64_t range_ms, double threshold) {
    Acc a;
    std::optional<double> last;
    for (const auto& p : s.points) {
      if (p.t_ms <= at_ms - range_ms || p.t_ms > at_ms) continue;
      a.n += 1;
      a.sum += p.value;
      a.le += p.value <= threshold ? 1 : 0;
      a.max = std::max(a.max, p.value);
      a.min = std::min(a.min, p.value);
      if (last && *last != p.value) a.changes += 1;
      last = p.value;
    }
    if (a.n == 0) return std::nullopt;
    return a;
  }

  // VictoriaMetrics' shapes (labelled_metricsql.cpp): a selector without a name, rolled up by
  // aggr_over_time (a `rollup` label per function) or count_le_over_time, keep_metric_names,
  // label_match on __name__ (an anchored alternation of names), summed `by` a list or raw.
  std::vector<tsdb::Series> evaluate_metricsql(const std::string& shape,
                                               const std::vector<std::string>& strings) const {
    std::vector<std::string> by;
    if (shape.rfind("sum by (", 0) == 0) {
      const std::string list = shape.substr(8, shape.find(')') - 8);
      for (std::size_t b = 0; b <= list.size();) {
        auto e = list.find(", ", b);
        if (e == std::string::npos) e = list.size();
        by.push_back(list.substr(b, e - b));
        b = e + 2;
      }
    }
    std::vector<std::string> rollups;
    double threshold = NAN;
    if (const auto at = shape.find("aggr_over_time(("); at != std::string::npos) {
      const std::string list = shape.substr(at + 16, shape.find(')', at) - at - 16);
      for (std::size_t b = 0; b < list.size();) {
        auto e = list.find(", ", b);
        if (e == std::string::npos) e = list.size();
        rollups.push_back(literal(list.substr(b, e - b), strings));
        b = e + 2;
      }
    } else if (shape.find("count_le_over_time({") != std::string::npos) {
      rollups.push_back("count_le");
      threshold = std::stod(shape.substr(shape.find(", ", shape.find("] @ ")) + 2));
    } else {
      throw std::invalid_argument("a MetricsQL shape the fake server does not know: " + shape);
    }
    const auto brace = shape.find('{'), brace_end = shape.find('}');
    if (std::isalnum(static_cast<unsigned char>(shape[brace - 1])) || shape[brace - 1] == '_')
      throw std::invalid_argument("a named selector in " + shape);
    const auto matchers = parse_matchers(shape.substr(brace + 1, brace_end - brace - 1), strings);
    const std::int64_t range_ms = std::stoll(shape.substr(brace_end + 2));
    const auto at_ms = static_cast<std::int64_t>(
        std::llround(std::stod(shape.substr(shape.find("] @ ") + 4)) * 1000));
    const auto keep = shape.find(" keep_metric_names, ");
    if (keep == std::string::npos) throw std::invalid_argument("no keep_metric_names: " + shape);
    const auto second = shape.find(", ", keep + 20);
    if (literal(shape.substr(keep + 20, second - keep - 20), strings) != "__name__") {
      throw std::invalid_argument("label_match on another label: " + shape);
    }
    std::string alternation =
        literal(shape.substr(second + 2, shape.find(')', second) - second - 2), strings);
    if (!alternation.starts_with("^(") || !alternation.ends_with(")$")) {
      throw std::invalid_argument("an unanchored name regex: " + alternation);
    }
    std::set<std::string> names;
    for (const auto& n : regex_ids(alternation.substr(2, alternation.size() - 4))) names.insert(n);
    std::map<tsdb::Labels, double> groups;
    for (const auto& s : data) {
      const auto it = s.labels.find("__name__");
      if (it == s.labels.end() || names.count(it->second) == 0 ||
          !ingest::testing::matches(s.labels, matchers)) {
        continue;
      }
      const auto a = series_acc(s, at_ms, range_ms, threshold);
      if (!a) continue;
      for (const auto& r : rollups) {
        tsdb::Labels labels = s.labels;
        if (r != "count_le") labels["rollup"] = r;
        tsdb::Labels key;
        for (const auto& l : by) {
          if (const auto v = labels.find(l); v != labels.end() && !v->second.empty())
            key[l] = v->second;
        }
        const double v = r == "sum_over_time"     ? a->sum
                         : r == "count_over_time" ? a->n
                         : r == "max_over_time"   ? a->max
                         : r == "min_over_time"   ? a->min
                         : r == "changes"         ? a->changes
                                                  : a->le;
        groups[by.empty() ? labels : key] += v;
      }
    }
    std::vector<tsdb::Series> out;
    for (const auto& [key, v] : groups) out.push_back({key, {{0, v}}});
    return out;
  }

  // One piece: which reduction, of which selector, over which window, grouped by what.
  std::vector<tsdb::Series> evaluate(const std::string& piece,
                                     const std::vector<std::string>& strings) const {
    const auto starts = [&](const char* p) { return piece.rfind(p, 0) == 0; };
    const auto has = [&](const char* p) { return piece.find(p) != std::string::npos; };
    std::vector<std::string> by;
    if (starts("count by (") || starts("sum by (") || starts("max by (")) {
      const auto open = piece.find('(') + 1;
      std::string list = piece.substr(open, piece.find(')') - open);
      for (std::size_t b = 0; b <= list.size();) {
        auto e = list.find(", ", b);
        if (e == std::string::npos) e = list.size();
        by.push_back(list.substr(b, e - b));
        b = e + 2;
      }
    }
    if (piece.find('{') == std::string::npos) return compared(piece, by);
    // The selector: its name, its matchers (each value a literal), its window.
    const auto brace = piece.find('{');
    auto name_begin = brace;
    while (name_begin > 0 && (std::isalnum(static_cast<unsigned char>(piece[name_begin - 1])) ||
                              piece[name_begin - 1] == '_' || piece[name_begin - 1] == ':')) {
      --name_begin;
    }
    const std::string name = piece.substr(name_begin, brace - name_begin);
    const auto brace_end = piece.find('}', brace);
    const auto matchers = parse_matchers(piece.substr(brace + 1, brace_end - brace - 1), strings);
    const auto bracket = piece.find('[', brace_end);
    const std::int64_t range_ms = std::stoll(piece.substr(bracket + 1));
    const auto at_text = piece.find("@ ", bracket);
    const auto at_ms =
        static_cast<std::int64_t>(std::llround(std::stod(piece.substr(at_text + 2)) * 1000));
    double threshold = NAN;
    if (has("count_le_over_time("))
      threshold = std::stod(piece.substr(piece.find(", ", at_text) + 2));
    if (has("<= bool ")) threshold = std::stod(piece.substr(piece.find("<= bool ") + 8));

    std::map<tsdb::Labels, Acc> groups;
    for (const auto& s : data) {
      const auto it = s.labels.find("__name__");
      if (it == s.labels.end() || it->second != name ||
          !ingest::testing::matches(s.labels, matchers)) {
        continue;
      }
      tsdb::Labels key;
      for (const auto& l : by) {
        if (const auto v = s.labels.find(l); v != s.labels.end() && !v->second.empty()) {
          key[l] = v->second;
        }
      }
      const auto found = series_acc(s, at_ms, range_ms, threshold);
      if (!found) continue;
      const Acc& a = *found;
      Acc& g = groups[key];
      g.n += a.n;
      g.sum += a.sum;
      g.le += a.le;
      g.changes += a.changes;
      g.series += 1;
      g.max = std::max(g.max, a.max);
      g.min = std::min(g.min, a.min);
    }
    std::vector<tsdb::Series> out;
    if (starts("count(")) {  // how many series: one number, no labels
      double series = 0;
      for (const auto& [key, g] : groups) series += g.series;
      if (series > 0) out.push_back({{}, {{0, series}}});
      return out;
    }
    for (const auto& [key, g] : groups) {
      double v = 0;
      if (starts("count by (")) {
        v = g.series;
      } else if (!std::isnan(threshold)) {
        v = g.le / g.n;
      } else if (starts("max by (")) {
        v = has(" - min by (") ? g.max - g.min : g.max;
      } else if (has("(changes(")) {
        v = g.changes;
      } else if (starts("sum by (") && has(" / ")) {
        v = g.sum / g.n;
      } else if (starts("sum by (")) {
        v = g.n;
      } else {
        throw std::invalid_argument("a piece the fake server does not know: " + piece);
      }
      out.push_back({key, {{0, v}}});
    }
    return out;
  }
};

}  // namespace gpuscope::fleet::testing
