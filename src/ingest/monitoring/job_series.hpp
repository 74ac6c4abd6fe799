// Which series of a monitoring database are a job's: the exporters' label conventions asked in
// a documented order (docs/jobs.md), jobstats' job-id series, and for exclusive nodes (or a
// list of hosts) every GPU of the nodes. Asks tsdb::Source::series() only, with selectors as
// narrow as the convention allows; one family per GPU, identified by its UUID, and a MIG
// instance by its GPU's UUID and its GPU instance id. The GPU of a job's MIG instance is read
// too, by UUID: its power, energy, temperature and clocks are the instance's GPU's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ingest/monitoring/exporter_families.hpp"
#include "ingest/monitoring/exporter_labels.hpp"
#include "ingest/monitoring/monitoring.hpp"
#include "tsdb/promql.hpp"
#include "tsdb/source.hpp"

namespace gpuscope::ingest {

// What read_job found odd or missing, each said once; `node` is "" for the whole job.
class Notes {
 public:
  // Says `text` unless something was said under `key` already ("" key: always).
  void once(const std::string& key, const std::string& node, std::string text);
  const std::vector<std::pair<std::string, std::string>>& all() const { return notes_; }
  std::vector<std::string> texts() const;
  std::vector<std::string> of_node(const std::string& node) const;

 private:
  std::set<std::string> keys_;
  std::vector<std::pair<std::string, std::string>> notes_;
};

// One way of asking for some of the job's series: a family's names and label matchers.
struct SeriesQuery {
  Family family = Family::Gpuscope;
  std::vector<tsdb::Matcher> matchers;  // besides __name__
  std::string how;                      // "gpuscope serve's label slurm_job_id=123", ...
  std::string job_label;                // the label naming the job ("" when none does)
  std::string job_value;                // this job's value of it

  // {__name__=~"<names>",<matchers>}
  std::string selector(const std::string& names) const;
};

// A time span, Unix milliseconds, both ends included.
using Span = std::pair<std::int64_t, std::int64_t>;

// One GPU of the job, or one MIG GPU instance (series with GPU_I_ID or gpu_instance_id).
struct JobGpu {
  std::string key;  // gpu_key() (exporter_labels.hpp): the UUID, or "<node>/gpu<index>"; " GI <id>"
                    // after for an instance
  std::string gpu;  // the key of the whole GPU: `key` itself, or an instance's GPU's
  bool has_uuid = false;
  std::string uuid;        // the GPU's UUID (an instance's: its GPU's, as exported); "" when none
  std::string uuid_label;  // the label holding it: uuid, UUID or gpu_uuid
  std::optional<unsigned> gpu_instance;    // a MIG instance: its GPU instance id
  std::optional<std::string> mig_profile;  // its profile (GPU_I_PROFILE, mig_profile)
  std::optional<std::string> mig_uuid;     // its own "MIG-..." UUID (gpuscope serve's mig_uuid)
  std::string node;
  std::size_t query = 0;  // JobSeries::queries
  std::optional<unsigned> index;
  std::optional<std::string> name;
  std::optional<std::string> pci_bus_id;
  // jobstats' job-id series: the times the GPU was this job's; empty: all of the window.
  std::vector<Span> job_times;
  std::set<std::string> names;  // series names found for it (metrics and descriptions)
  bool shared = false;          // another job's label was on it during the window too
};

struct JobSeries {
  std::vector<SeriesQuery> queries;
  std::vector<JobGpu> gpus;                // one per GPU, in query order
  std::vector<std::string> nodes_missing;  // job nodes with no series of any family
};

// Finds the job's GPUs. Never throws for nothing found (gpus empty); the caller says so.
JobSeries find_job_series(tsdb::Source& source, const JobWindow& job, Notes& notes);

// The label queries for `job`, in the order tried (exposed for tests and docs).
std::vector<SeriesQuery> label_queries(const JobWindow& job);

}  // namespace gpuscope::ingest
