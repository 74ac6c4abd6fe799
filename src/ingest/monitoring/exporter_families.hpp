// The exporters whose series gpuscope reads back from a monitoring database (gpuscope serve,
// NVIDIA's dcgm-exporter of every naming it has had, jobstats' nvidia_gpu_* exporter): one
// table of their series names, the catalog metric each fills and the factor to its unit, used
// both to build the selectors asked and to convert what comes back (docs/jobs.md). Their label
// conventions are exporter_labels.hpp's.
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

}  // namespace gpuscope::ingest
