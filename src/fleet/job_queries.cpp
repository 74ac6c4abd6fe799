#include "fleet/job_queries.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fleet/gpu_aggregates.hpp"
#include "tsdb/promql.hpp"

namespace gpuscope::fleet {

namespace {

// The labels that tell a GPU (or MIG instance) and where it is, in every family
// (exporter_labels.hpp): a reduction keeps these and adds up what differs in the rest.
constexpr std::string_view kGpuLabels =
    "uuid, UUID, gpu_uuid, gpu, minor_number, modelName, model_name, name, GPU_I_ID, "
    "GPU_I_PROFILE, gpu_instance_id, mig_profile, mig_uuid, hostname, Hostname, node, nodename, "
    "instance";

std::string per_gpu(std::string_view op, const std::string& inner) {
  return fmt::format("{} by ({}) ({})", op, kGpuLabels, inner);
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

std::string reduce_expr(const ReduceAsk& a, const std::string& sel, const JobWindowText& w) {
  const std::string over = fmt::format("{}[{}] {}", sel, w.range, w.at);
  const std::string sum = per_gpu("sum", fmt::format("sum_over_time({})", over));
  const std::string count = per_gpu("sum", fmt::format("count_over_time({})", over));
  switch (a.reduce) {
    case Reduce::Mean:
      return fmt::format("{} / {}", sum, count);
    case Reduce::Count:
      return count;
    case Reduce::Max:
      return per_gpu("max", fmt::format("max_over_time({})", over));
    case Reduce::Rise:
      return fmt::format("{} - {}", per_gpu("max", fmt::format("max_over_time({})", over)),
                         per_gpu("min", fmt::format("min_over_time({})", over)));
    case Reduce::Changes:
      return per_gpu("sum", fmt::format("changes({})", over));
    case Reduce::Idle:
      break;
  }
  if (a.kind == tsdb::ServerKind::VictoriaMetrics) {  // exact: the stored samples
    return fmt::format(
        "{} / {}",
        per_gpu("sum", fmt::format("count_le_over_time({}, {})", over, a.idle_threshold)), count);
  }
  // Prometheus has no count_le_over_time: a subquery at a step the window holds 20 times at least.
  const std::int64_t step = std::clamp<std::int64_t>(w.range_ms / 20, 1000, a.idle_step_ms);
  const std::string grid = fmt::format("[{}:{}ms] {}", w.range, step, w.at);
  return fmt::format(
      "{} / {}",
      per_gpu("sum", fmt::format("sum_over_time(({} <= bool {}){})", sel, a.idle_threshold, grid)),
      per_gpu("sum", fmt::format("count_over_time({}{})", sel, grid)));
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
