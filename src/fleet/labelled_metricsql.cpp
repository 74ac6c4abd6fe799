// The GPUs of a batch's jobs that an exporter labels, read from VictoriaMetrics with selectors
// that name no series: `{L=~"id|id|..."}` finds every series name of the batch's jobs in one
// index search, where `name{L=~...}` costs one search per name (docs/performance.md, "Where the
// time goes"). Three reductions per batch, each through MetricsQL's `label_match` on `__name__`
// to the family's names:
//   sums and counts   sum by (GPU, job, name, rollup) (aggr_over_time(("sum_over_time",
//                     "count_over_time"), ...) keep_metric_names)
//   extremes          aggr_over_time(("max_over_time", "min_over_time", "changes"), ...) per
//                     series, merged here (a maximum of maxima, a minimum of minima)
//   the idle count    sum by (GPU, job, name) (count_le_over_time(..., threshold))
// The figures are those of the per-name queries (gpu_aggregates.cpp): the same samples, the same
// reductions, the first name of the family's order for a figure.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "fleet/aggregate_batch.hpp"
#include "tsdb/promql.hpp"

namespace gpuscope::fleet {

namespace {

// A series name of the family and the label values its series must carry.
struct Spec {
  std::string_view name;
  std::vector<std::pair<std::string, std::string>> labels;
  double scale = 1;
};

// What the server reduced of one spec for one job's GPU.
struct Acc {
  double sum = 0, count = 0, le = 0, changes = 0;
  bool le_seen = false;
  std::optional<double> max, min;
};

// `type="uncorrected",counter="volatile"` (kHealthAsks' matchers, literal values) as pairs.
std::vector<std::pair<std::string, std::string>> matcher_pairs(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t at = 0; at < text.size();) {
    const auto eq = text.find("=\"", at);
    const auto close = text.find('"', eq + 2);
    out.emplace_back(std::string(text.substr(at, eq - at)),
                     std::string(text.substr(eq + 2, close - eq - 2)));
    at = close + 2;  // past `",`
  }
  return out;
}

// The specs of a family, in order: the catalog's names (kAsks' metrics), the memory sizes, the
// health series.
struct Specs {
  std::vector<Spec> list;
  std::map<Metric, std::vector<std::size_t>> by_metric;  // in exported_names' order
  std::vector<std::size_t> totals;
  std::vector<std::pair<std::size_t, Reduce>> health;
  std::set<std::string> extra_labels;
};

Specs family_specs(ingest::Family family, Figures figures) {
  Specs s;
  auto add = [&](Spec spec) {
    for (const auto& [label, value] : spec.labels) s.extra_labels.insert(label);
    s.list.push_back(std::move(spec));
    return s.list.size() - 1;
  };
  for (const auto& name : ingest::exported_names()) {
    if (name.family != family) continue;
    const bool asked = std::any_of(kAsks.begin(), kAsks.end(), [&](const Ask& a) {
      return a.metric == name.metric && slot_asked(figures, a.slot);
    });
    if (!asked) continue;
    Spec spec{name.name, {}, name.scale};
    if (!name.label.empty()) spec.labels.emplace_back(name.label, name.value);
    s.by_metric[name.metric].push_back(add(std::move(spec)));
  }
  for (const TotalAsk& t : kMemoryTotals) {
    if (t.family != family || !slot_asked(figures, Slot::MemoryTotal)) continue;
    const double scale = ingest::memory_total_bytes(std::string(t.name), 1).value_or(1);
    s.totals.push_back(add({t.name, {}, scale}));
  }
  for (const HealthAsk& h : kHealthAsks) {
    if (h.family != family || !slot_asked(figures, Slot::Health)) continue;
    s.health.emplace_back(add({h.selector_name, matcher_pairs(h.matchers), 1}), h.reduce);
  }
  return s;
}

bool reduced_by(const Specs& s, std::size_t spec, std::initializer_list<Reduce> reduces) {
  for (const Ask& a : kAsks) {
    const auto it = s.by_metric.find(a.metric);
    if (it == s.by_metric.end()) continue;
    if (std::find(it->second.begin(), it->second.end(), spec) == it->second.end()) continue;
    if (std::find(reduces.begin(), reduces.end(), a.reduce) != reduces.end()) return true;
  }
  return false;
}

// `"^(a|b)$"` of the specs' names chosen by `keep`.
template <typename Keep>
std::string names_regex(const Specs& s, Keep keep) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < s.list.size(); ++i) {
    if (keep(i)) names.insert(tsdb::regex_quote(s.list[i].name));
  }
  return names.empty() ? std::string() : tsdb::quote(fmt::format("^({})$", fmt::join(names, "|")));
}

// The answers of one batch, by (job, GPU key, spec), with each GPU's labels as first seen.
struct Answers {
  std::map<std::tuple<std::string, std::string, std::size_t>, Acc> acc;
  std::map<std::pair<std::string, std::string>, tsdb::Labels> labels;
};

class Reader {
 public:
  Reader(tsdb::Source& source, Batch& batch, const LabelAsk& l,
         const std::vector<const AggregateJob*>& jobs, const AggregateOptions& options,
         AggregateRead& read)
      : source_(source),
        batch_(batch),
        l_(l),
        jobs_(jobs),
        options_(options),
        read_(read),
        specs_(family_specs(l.convention.family, options.figures)) {
    std::string extra;
    for (const auto& label : specs_.extra_labels) extra += ", " + label;
    by_ = fmt::format("{}, {}, __name__{}", kGpuLabels, l.label, extra);
    // Asked for fewer figures, the selector names their series: the server reads no other.
    if (options.figures != Figures::All && !specs_.list.empty()) {
      names_ = ",__name__=~" + names_regex(specs_, [](std::size_t) { return true; });
    }
  }

  void run() {
    if (specs_.list.empty()) return;
    sums_and_counts();
    extremes();
    idle_counts();
    finish();
  }

 private:
  std::string selector_over(const std::string& regex, const JobWindowText& w) const {
    return fmt::format("{{{}=~{}{}}}[{}] {}", l_.label, tsdb::quote(regex), names_, w.range, w.at);
  }

  template <typename Expr, typename Take>
  void ask(Expr expr, Take take) {
    batch_query(source_, jobs_, l_.convention.list, options_, expr, take, read_.queries);
  }

  // Calls `add(acc, spec)` for each spec and job of the batch a series is.
  template <typename Add>
  void take(const tsdb::Series& series, Add add) {
    const auto name = series.labels.find("__name__");
    if (name == series.labels.end()) return;
    for (const AggregateJob* job :
         jobs_named(series.labels, l_.label, l_.convention.list, batch_)) {
      const std::string key = ingest::gpu_key(series.labels, job->nodes);
      answers_.labels.try_emplace({job->id, key}, series.labels);
      for (std::size_t i = 0; i < specs_.list.size(); ++i) {
        const Spec& spec = specs_.list[i];
        if (spec.name != name->second) continue;
        const bool all = std::all_of(spec.labels.begin(), spec.labels.end(), [&](const auto& p) {
          const auto it = series.labels.find(p.first);
          return it != series.labels.end() && it->second == p.second;
        });
        if (all) add(answers_.acc[{job->id, key, i}], series.points.back().value);
      }
    }
  }

  std::string rollup_of(const tsdb::Series& series) const {
    const auto it = series.labels.find("rollup");
    return it == series.labels.end() ? std::string() : it->second;
  }

  void sums_and_counts() {
    const std::string names = names_regex(specs_, [&](std::size_t i) {
      return reduced_by(specs_, i, {Reduce::Mean, Reduce::Count, Reduce::Idle}) ||
             std::find(specs_.totals.begin(), specs_.totals.end(), i) != specs_.totals.end();
    });
    if (names.empty()) return;
    ask(
        [&](const std::string& regex, const JobWindowText& w) {
          return fmt::format(
              "sum by ({}, rollup) (label_match(aggr_over_time((\"sum_over_time\", "
              "\"count_over_time\"), {}) keep_metric_names, \"__name__\", {}))",
              by_, selector_over(regex, w), names);
        },
        [&](const tsdb::Series& series) {
          const std::string rollup = rollup_of(series);
          take(series, [&](Acc& a, double v) {
            if (rollup == "sum_over_time") a.sum += v;
            if (rollup == "count_over_time") a.count += v;
          });
        });
  }

  void extremes() {
    const std::string names = names_regex(specs_, [&](std::size_t i) {
      if (reduced_by(specs_, i, {Reduce::Max, Reduce::Rise})) return true;
      return std::any_of(specs_.health.begin(), specs_.health.end(),
                         [&](const auto& h) { return h.first == i; });
    });
    if (names.empty()) return;
    ask(
        [&](const std::string& regex, const JobWindowText& w) {
          return fmt::format(
              "label_match(aggr_over_time((\"max_over_time\", \"min_over_time\", \"changes\"), "
              "{}) keep_metric_names, \"__name__\", {})",
              selector_over(regex, w), names);
        },
        [&](const tsdb::Series& series) {
          const std::string rollup = rollup_of(series);
          take(series, [&](Acc& a, double v) {
            if (rollup == "max_over_time") a.max = std::max(a.max.value_or(v), v);
            if (rollup == "min_over_time") a.min = std::min(a.min.value_or(v), v);
            if (rollup == "changes") a.changes += v;
          });
        });
  }

  // The idle samples of the utilization names, one query per threshold (a name's unit sets it).
  void idle_counts() {
    const auto util = specs_.by_metric.find(Metric::GpuUtilPct);
    if (util == specs_.by_metric.end()) return;
    std::map<double, std::vector<std::size_t>> by_threshold;
    for (const std::size_t i : util->second) {
      by_threshold[options_.idle_util_pct / specs_.list[i].scale].push_back(i);
    }
    for (const auto& entry : by_threshold) {
      // Named copies, not structured bindings: lambdas may not capture those before C++20's
      // P1091 (clang 14, the fuzz build's compiler, refuses them).
      const double threshold = entry.first;
      const std::vector<std::size_t>& indices = entry.second;
      const std::string names = names_regex(specs_, [&](std::size_t i) {
        return std::find(indices.begin(), indices.end(), i) != indices.end();
      });
      ask(
          [&](const std::string& regex, const JobWindowText& w) {
            return fmt::format(
                "sum by ({}) (label_match(count_le_over_time({}, {}) keep_metric_names, "
                "\"__name__\", {}))",
                by_, selector_over(regex, w), threshold, names);
          },
          [&](const tsdb::Series& series) {
            take(series, [&](Acc& a, double v) {
              a.le += v;
              a.le_seen = true;
            });
          });
    }
  }

  const Acc* acc(const AggregateJob& job, const std::string& key, std::size_t spec) const {
    const auto it = answers_.acc.find({job.id, key, spec});
    return it == answers_.acc.end() ? nullptr : &it->second;
  }

  std::optional<double> reduced(const Acc& a, Reduce reduce, double scale) const {
    switch (reduce) {
      case Reduce::Mean:
        if (a.count > 0) return a.sum / a.count * scale;
        return std::nullopt;
      case Reduce::Count:
        if (a.count > 0) return a.count;
        return std::nullopt;
      case Reduce::Idle:
        if (a.count > 0 && a.le_seen) return a.le / a.count;
        return std::nullopt;
      case Reduce::Max:
        if (a.max) return *a.max * scale;
        return std::nullopt;
      case Reduce::Rise:
        if (a.max && a.min) return (*a.max - *a.min) * scale;
        return std::nullopt;
      case Reduce::Changes:
        if (a.max) return a.changes;  // the extremes query answered for the series
        return std::nullopt;
    }
    return std::nullopt;
  }

  // The slots of one job's GPU: each figure from the first spec of the family that has it.
  void fill(Found& f, const AggregateJob& job, const std::string& key) const {
    for (const Ask& a : kAsks) {
      auto& slot = f.slots[static_cast<std::size_t>(a.slot)];
      const auto specs = specs_.by_metric.find(a.metric);
      if (specs == specs_.by_metric.end()) continue;
      for (const std::size_t i : specs->second) {
        const Acc* x = acc(job, key, i);
        if (slot || x == nullptr) continue;
        slot = reduced(*x, a.reduce, specs_.list[i].scale);
      }
    }
    auto& total = f.slots[static_cast<std::size_t>(Slot::MemoryTotal)];
    for (const std::size_t i : specs_.totals) {
      const Acc* x = acc(job, key, i);
      if (!total && x != nullptr) total = reduced(*x, Reduce::Mean, specs_.list[i].scale);
    }
    auto& health = f.slots[static_cast<std::size_t>(Slot::Health)];
    for (const auto& [i, reduce] : specs_.health) {
      const Acc* x = acc(job, key, i);
      if (x == nullptr) continue;
      if (const auto v = reduced(*x, reduce, 1)) health = health.value_or(0) + *v;
    }
  }

  // The jobs with utilization samples are found: their GPUs' entries get their figures.
  void finish() {
    std::set<const AggregateJob*> found;
    const auto util = specs_.by_metric.find(Metric::GpuUtilPct);
    if (util == specs_.by_metric.end()) return;
    for (const auto& [k, a] : answers_.acc) {
      const std::size_t spec = std::get<2>(k);
      const bool is_util =
          std::find(util->second.begin(), util->second.end(), spec) != util->second.end();
      if (is_util && a.count > 0) found.insert(batch_.by_id.at(std::get<0>(k)));
    }
    for (const auto& [job_key, labels] : answers_.labels) {
      const AggregateJob* job = batch_.by_id.at(job_key.first);
      if (found.count(job) == 0) continue;
      fill(entry(batch_, *job, labels, l_.convention.family), *job, job_key.second);
    }
    for (const AggregateJob* job : found) {
      read_.matched_by[job->id] =
          fmt::format("{}'s label {}", ingest::family_name(l_.convention.family), l_.label);
    }
  }

  tsdb::Source& source_;
  Batch& batch_;
  const LabelAsk& l_;
  const std::vector<const AggregateJob*>& jobs_;
  const AggregateOptions& options_;
  AggregateRead& read_;
  Specs specs_;
  std::string names_;  // ",__name__=~..." when fewer figures are asked
  std::string by_;
  Answers answers_;
};

}  // namespace

void read_labelled_metricsql(tsdb::Source& source, Batch& batch, const LabelAsk& l,
                             const std::vector<const AggregateJob*>& jobs,
                             const AggregateOptions& options, AggregateRead& read) {
  if (jobs.empty()) return;
  Reader(source, batch, l, jobs, options, read).run();
}

}  // namespace gpuscope::fleet
