#include "fleet/job_queries.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fleet/gpu_aggregates.hpp"
#include "tsdb/promql.hpp"

namespace gpuscope::fleet {

namespace {

std::string per_gpu(std::string_view op, const std::string& inner, const std::string& also) {
  if (also.empty()) return fmt::format("{} by ({}) ({})", op, kGpuLabels, inner);
  return fmt::format("{} by ({}, {}) ({})", op, kGpuLabels, also, inner);
}

}  // namespace

JobWindowText window_text(const AggregateJob& job) {
  JobWindowText w;
  w.at_ms = job.end_ms + 999;
  w.range_ms = w.at_ms - job.start_ms + 1;
  w.range = fmt::format("{}ms", w.range_ms);
  w.at = fmt::format("@ {}.{:03}", w.at_ms / 1000, w.at_ms % 1000);
  return w;
}

JobWindowText span_text(std::int64_t from_ms, std::int64_t to_ms, std::int64_t slack_ms) {
  JobWindowText w;
  w.at_ms = to_ms + 999 + slack_ms;
  w.range_ms = w.at_ms - (from_ms - slack_ms);
  w.range = fmt::format("{}ms", w.range_ms);
  w.at = fmt::format("@ {}.{:03}", w.at_ms / 1000, w.at_ms % 1000);
  return w;
}

std::string reduce_expr(const ReduceAsk& a, const std::string& sel, const JobWindowText& w) {
  const auto group = [&](std::string_view op, const std::string& inner) {
    return per_gpu(op, inner, a.by_also);
  };
  const std::string over = fmt::format("{}[{}] {}", sel, w.range, w.at);
  const std::string sum = group("sum", fmt::format("sum_over_time({})", over));
  const std::string count = group("sum", fmt::format("count_over_time({})", over));
  switch (a.reduce) {
    case Reduce::Mean:
      return fmt::format("{} / {}", sum, count);
    case Reduce::Count:
      return count;
    case Reduce::Max:
      return group("max", fmt::format("max_over_time({})", over));
    case Reduce::Rise:
      return fmt::format("{} - {}", group("max", fmt::format("max_over_time({})", over)),
                         group("min", fmt::format("min_over_time({})", over)));
    case Reduce::Changes:
      return group("sum", fmt::format("changes({})", over));
    case Reduce::Idle:
      break;
  }
  if (a.kind == tsdb::ServerKind::VictoriaMetrics) {  // exact: the stored samples
    return fmt::format(
        "{} / {}", group("sum", fmt::format("count_le_over_time({}, {})", over, a.idle_threshold)),
        count);
  }
  // Prometheus has no count_le_over_time: a subquery at a fixed step, whose evaluation times
  // Prometheus aligns to the clock, so a job's share is the same whatever window holds it.
  const std::string grid = fmt::format("[{}:{}ms] {}", w.range, a.idle_step_ms, w.at);
  return fmt::format(
      "{} / {}",
      group("sum", fmt::format("sum_over_time(({} <= bool {}){})", sel, a.idle_threshold, grid)),
      group("sum", fmt::format("count_over_time({}{})", sel, grid)));
}

std::string joined_pieces(const std::vector<std::string>& pieces,
                          const std::vector<std::string>& ids) {
  std::string expr;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (!expr.empty()) expr += " or ";
    expr += fmt::format("label_replace({}, {}, {}, \"\", \"\")", pieces[i], tsdb::quote(kJobMark),
                        tsdb::quote(ids[i]));
  }
  return expr;
}

}  // namespace gpuscope::fleet
