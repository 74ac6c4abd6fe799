// The exporters whose series gpuscope reads back from a monitoring database (gpuscope serve,
// NVIDIA's dcgm-exporter of every naming it has had, jobstats' nvidia_gpu_* exporter): one
// table of their series names, the catalog metric each fills and the factor to its unit, used
// both to build the selectors asked and to convert what comes back (docs/jobs.md). Also the
// label conventions they share (GPU identity, node names) and PromQL selector text.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/metrics.hpp"
#include "tsdb/series.hpp"

namespace gpuscope::ingest {

// In the order one is preferred to another for the same GPU.
enum class Family { Gpuscope, Dcgm, Jobstats };
inline constexpr std::array<Family, 3> kFamilies = {Family::Gpuscope, Family::Dcgm,
                                                    Family::Jobstats};

// "gpuscope serve", "dcgm-exporter", "jobstats (nvidia_gpu_*)".
std::string_view family_name(Family family);

// One exported series name and what it means.
struct ExportedName {
  Family family;
  std::string_view name;
  Metric metric;
  double scale;          // exported value × scale = the catalog's unit
  bool counter = false;  // cumulative: summaries take its value at each bucket's end
  // Only the series whose label `label` is `value` (jobstats' nvidia_gpu_clock{type="sm"}).
  std::string_view label = {};
  std::string_view value = {};
  // A ratio by its name that a DCGM 4.6 exporter still sent in percent (same field id): values
  // above 1 are taken as percent (said in a note).
  bool ratio_or_percent = false;
};

// Every name of every family.
std::span<const ExportedName> exported_names();

// What `labels` (a series' labels, __name__ included) means; nullptr for a series gpuscope does
// not read as a metric.
const ExportedName* exported_name(const tsdb::Labels& labels);

// Series that describe a GPU rather than measure it: gpuscope_gpu_info (name, pci_bus_id),
// jobstats' nvidia_gpu_memory_total_bytes, dcgm-exporter's DCGM_FI_DEV_FB_TOTAL (MiB) and
// DCGM_FI_DEV_FB_CAPACITY_BYTES.
bool is_description_series(const std::string& name);
// The GPU's memory size in bytes from such a series' value, where it gives one.
std::optional<double> memory_total_bytes(const std::string& name, double value);

// The family a series name belongs to, if any (metric and description series alike).
std::optional<Family> family_of(const std::string& name);

// The regular expression matching every name of `family` gpuscope reads (metrics and
// descriptions), for __name__=~"...".
std::string names_regex(Family family);

// The series name of jobstats' job id per GPU (its value is the job id).
inline constexpr std::string_view kJobstatsJobId = "nvidia_gpu_jobId";

// --- GPU and node identity ---------------------------------------------------------------

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

// Whether `label` names the workload of the moment (slurm_job_id, hpc_job, jobid, userid, pod,
// namespace, container and their older and exported_ forms): exporters add and drop these as
// processes come and go, so a GPU's series with and without them are one series.
bool is_workload_label(std::string_view label);

// The node a series is from: the first label of kNodeLabels whose value names one of `nodes`
// (compared by short_host), spelled as in `nodes`; otherwise the short form of the first of
// those labels present; "" when none is.
std::string node_of(const tsdb::Labels& labels, const std::vector<std::string>& nodes);

// --- PromQL text ---------------------------------------------------------------------------

// `text` with the regular-expression metacharacters escaped, for a =~ matcher (RE2 syntax).
std::string regex_quote(std::string_view text);

struct Matcher {
  std::string label;
  std::string op;  // "=", "!=", "=~", "!~"
  std::string value;
};
// {label="value",...} with every value escaped.
std::string selector(const std::vector<Matcher>& matchers);

}  // namespace gpuscope::ingest
