// The label conventions of the exporters whose series gpuscope reads back (gpuscope serve,
// dcgm-exporter, jobstats; docs/jobs.md), in one place: which labels name a job or a pod in each
// family, which tell the GPU (UUID, index, model), a MIG instance and the node, and the key a
// series' GPU is known by. The series names are exporter_families.hpp's.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/monitoring/exporter_families.hpp"
#include "tsdb/series.hpp"

namespace gpuscope::ingest {

// --- The job's labels ----------------------------------------------------------------------

// A label that names a SLURM job in one family, as its exporter sets it; each is asked as it is
// and with the exported_ prefix a scrape gives it when the target has a label of that name.
struct JobLabel {
  Family family;
  std::string_view label;
  bool list = false;  // may hold several jobs, "123,124" (dcgm-exporter's hpc_job)
};
// In the order they are asked (docs/jobs.md, "Which series").
inline constexpr std::array<JobLabel, 3> kSlurmJobLabels = {{
    {Family::Gpuscope, "slurm_job_id"},
    {Family::Dcgm, "hpc_job", true},
    {Family::Jobstats, "jobid"},
}};

// The labels that name a Kubernetes pod and its namespace in one family.
struct PodLabels {
  Family family;
  std::string_view pod;
  std::string_view pod_namespace;
};
// In the order they are asked.
inline constexpr std::array<PodLabels, 5> kPodLabels = {{
    {Family::Gpuscope, "pod", "namespace"},
    {Family::Gpuscope, "exported_pod", "exported_namespace"},
    {Family::Dcgm, "pod", "namespace"},
    {Family::Dcgm, "exported_pod", "exported_namespace"},
    {Family::Dcgm, "pod_name", "pod_namespace"},
}};

// Whether `label` names the workload of the moment (the job and pod labels above, userid,
// container and their older and exported_ forms): exporters add and drop these as processes
// come and go, so a GPU's series with and without them are one series.
bool is_workload_label(std::string_view label);

// --- GPU and node identity -----------------------------------------------------------------

// The GPU's UUID: label uuid (gpuscope, jobstats, dcgm-exporter's --use-old-namespace), UUID
// (dcgm-exporter) or gpu_uuid; nullptr when none.
const std::string* gpu_uuid(const tsdb::Labels& labels);
// The exporter's GPU index: gpu (gpuscope, dcgm-exporter) or minor_number (jobstats).
std::optional<unsigned> gpu_index(const tsdb::Labels& labels);
// The GPU's name: modelName (dcgm-exporter), name (gpuscope_gpu_info, jobstats).
const std::string* gpu_model(const tsdb::Labels& labels);

// A MIG GPU instance's series. gpu and the GPU's UUID label are its GPU's (the parent's) in
// every naming; the instance is told by
// - dcgm-exporter (and gpuscope serve --naming dcgm): GPU_I_ID, the GPU instance id (NVML's), and
//   GPU_I_PROFILE, the profile as DCGM names it ("1g.10gb");
// - gpuscope serve: gpu_instance_id, mig_profile and mig_uuid, the instance's own "MIG-..." UUID;
// - jobstats (and gpuscope serve --naming jobstats): GPU_I_ID only.
// A series with none of them, or an empty one (jobstats' naming sends GPU_I_ID="" for a whole
// GPU), is a whole GPU's: nullopt.
struct MigLabels {
  unsigned gpu_instance_id = 0;
  std::optional<std::string> profile;
  std::optional<std::string> mig_uuid;
};
std::optional<MigLabels> mig_instance(const tsdb::Labels& labels);
// The labels that tell a MIG instance's series from its GPU's (empty or absent on the GPU's).
inline constexpr std::array<std::string_view, 2> kMigInstanceLabels = {"gpu_instance_id",
                                                                       "GPU_I_ID"};

// The labels that may name the node, in the order they are tried.
inline constexpr std::array<std::string_view, 5> kNodeLabels = {"hostname", "Hostname", "node",
                                                                "nodename", "instance"};

// A host name as compared: the host part of host:port (or [v6]:port), lower case, and the
// short name of a fully qualified one (an IP address is kept whole).
std::string short_host(std::string_view value);

// The node a series is from: the first label of kNodeLabels whose value names one of `nodes`
// (compared by short_host), spelled as in `nodes`; otherwise the short form of the first of
// those labels present; "" when none is.
std::string node_of(const tsdb::Labels& labels, const std::vector<std::string>& nodes);

// node_of for many series against many nodes (a site's): the nodes' short names indexed once.
class NodeIndex {
 public:
  explicit NodeIndex(const std::vector<std::string>& nodes);
  // What node_of(labels, nodes) gives.
  std::string node_of(const tsdb::Labels& labels) const;

 private:
  std::map<std::string, std::string> by_short_;  // short_host(node) → the first such node
};

// The key of the whole GPU a series is of (a MIG instance's: its GPU's): its UUID, else
// "<node>/gpu<index>".
std::string whole_gpu_key(const tsdb::Labels& labels, const std::string& node);
// The key of the GPU or MIG instance a series is of: the GPU's UUID, else "<node>/gpu<index>"
// (its node told by `nodes`, node_of), then " GI <id>" for a MIG instance.
std::string gpu_key(const tsdb::Labels& labels, const std::vector<std::string>& nodes);

}  // namespace gpuscope::ingest
