// The PromQL that gpu_aggregates asks, built safely: a job's window as a range and an @ time,
// a piece per job reduced over its GPUs' series (sum, count, mean, max, rise, idle share, an
// exporter's series with and without its workload labels added up per GPU), marked with the
// job's id and joined with `or`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tsdb/source.hpp"

namespace gpuscope::fleet {

struct AggregateJob;

// The label each piece marks its job with, so that pieces never collide (a GPU shared by two
// jobs of a list label is in both) and each answer says whose it is.
inline constexpr std::string_view kJobMark = "gpuscope_job";

// The labels that tell a GPU (or MIG instance) and where it is, in every family
// (exporter_labels.hpp): a reduction keeps these and adds up what differs in the rest.
inline constexpr std::string_view kGpuLabels =
    "uuid, UUID, gpu_uuid, gpu, minor_number, modelName, model_name, name, GPU_I_ID, "
    "GPU_I_PROFILE, gpu_instance_id, mig_profile, mig_uuid, hostname, Hostname, node, nodename, "
    "instance";

// The job's window: it ran from Start (whole seconds, cut down) until before End + 1 s, so
// (start - 1 ms, end + 999 ms].
struct JobWindowText {
  std::string range;  // "41000ms"
  std::string at;     // "@ 1795924249.999"
  std::int64_t range_ms = 0;
  std::int64_t at_ms = 0;
};
JobWindowText window_text(const AggregateJob& job);
// A batch's window: from before its first job's start to after its last one's end, `slack_ms`
// either side.
JobWindowText span_text(std::int64_t from_ms, std::int64_t to_ms, std::int64_t slack_ms);

enum class Reduce { Mean, Count, Idle, Max, Rise, Changes };

struct ReduceAsk {
  Reduce reduce = Reduce::Mean;
  double idle_threshold = 0;  // in the series' own unit
  tsdb::ServerKind kind = tsdb::ServerKind::Other;
  std::int64_t idle_step_ms = 2'000;  // Prometheus' idle share is a subquery at this step
  std::string by_also = {};  // a label kept besides the GPU's (the job label of a batch); "" none
};

// `reduce` of the series `selector` ({...} with the name) over `w`, added up per GPU: a GPU's
// series with and without workload labels (the job's, a pod's) are one GPU's samples.
std::string reduce_expr(const ReduceAsk& ask, const std::string& selector, const JobWindowText& w);

// "label_replace(<piece>, "gpuscope_job", "<id>", "", "")" for each job, joined with " or ".
std::string joined_pieces(const std::vector<std::string>& pieces,
                          const std::vector<std::string>& ids);

}  // namespace gpuscope::fleet
