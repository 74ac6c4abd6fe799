#include "fleet/aggregate_batch.hpp"

#include <fmt/format.h>

#include "tsdb/promql.hpp"

namespace gpuscope::fleet {

std::string selector(std::string_view name, std::string_view extra, const std::string& matcher) {
  return extra.empty() ? fmt::format("{}{{{}}}", name, matcher)
                       : fmt::format("{}{{{},{}}}", name, extra, matcher);
}

std::string ids_regex(const std::vector<const AggregateJob*>& jobs, bool list) {
  std::string alternatives;
  for (const AggregateJob* job : jobs) {
    if (!alternatives.empty()) alternatives += '|';
    alternatives += tsdb::regex_quote(job->id);
  }
  return list ? "(.*,)?(" + alternatives + ")(,.*)?" : alternatives;
}

std::vector<const AggregateJob*> jobs_named(const tsdb::Labels& labels, const std::string& label,
                                            bool list, const Batch& batch) {
  std::vector<const AggregateJob*> out;
  const auto it = labels.find(label);
  if (it == labels.end()) return out;
  const std::string& value = it->second;
  for (std::size_t begin = 0; begin <= value.size();) {
    std::size_t end = list ? value.find(',', begin) : std::string::npos;
    if (end == std::string::npos) end = value.size();
    const auto job = batch.by_id.find(value.substr(begin, end - begin));
    if (job != batch.by_id.end()) out.push_back(job->second);
    begin = end + 1;
  }
  return out;
}

Found& entry(Batch& batch, const AggregateJob& job, const tsdb::Labels& labels,
             ingest::Family family) {
  const std::string key = ingest::gpu_key(labels, job.nodes);
  auto [it, added] = batch.found.try_emplace({job.id, key});
  if (added) {
    GpuAggregate& g = it->second.gpu;
    g.key = key;
    g.node = ingest::node_of(labels, job.nodes);
    g.index = ingest::gpu_index(labels);
    if (const std::string* model = ingest::gpu_model(labels)) g.model = *model;
    if (const auto mig = ingest::mig_instance(labels)) g.mig_profile = mig->profile;
    g.family = std::string(ingest::family_name(family));
  }
  return it->second;
}

}  // namespace gpuscope::fleet
