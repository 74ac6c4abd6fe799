// Jobs and series for the aggregates' tests (gpu_aggregates_test.cpp and what builds on it):
// jobs over seconds after one start, an exporter's samples every 10 s, and reading them through
// the fake server.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "fake_promql_source.hpp"
#include "fleet/gpu_aggregates.hpp"

namespace gpuscope::fleet::testing {

inline constexpr std::int64_t kS = 1795924200000;  // the jobs' start
inline constexpr std::int64_t kSecond = 1000;

inline AggregateJob job(const std::string& id, std::int64_t from_s, std::int64_t to_s,
                        std::vector<std::string> nodes = {"n1"}) {
  return {id, kS + from_s * kSecond, kS + to_s * kSecond, std::move(nodes)};
}

// One sample every 10 s from `from_s` to `to_s` (both included), seconds after kS.
inline std::vector<tsdb::Point> every10s(std::int64_t from_s, std::int64_t to_s, double value,
                                         double rise_per_sample = 0) {
  std::vector<tsdb::Point> out;
  for (std::int64_t t = from_s; t <= to_s; t += 10) {
    out.push_back({kS + t * kSecond, value});
    value += rise_per_sample;
  }
  return out;
}

inline tsdb::Labels series(const std::string& name, tsdb::Labels labels,
                           const std::string& job_id = "") {
  labels["__name__"] = name;
  if (!job_id.empty()) labels["slurm_job_id"] = job_id;
  return labels;
}

inline AggregateRead read_aggregates(FakePromqlSource& src, const std::vector<AggregateJob>& jobs,
                                     std::size_t per_query = 500) {
  AggregateOptions options;
  options.jobs_per_query = per_query;
  return read_gpu_aggregates(src, jobs, options);
}

inline const GpuAggregate& only_gpu(const AggregateRead& r, const std::string& id) {
  const auto it = r.by_job.find(id);
  if (it == r.by_job.end() || it->second.size() != 1) {
    throw std::runtime_error("job " + id + " has not exactly one GPU");
  }
  return it->second.front();
}

}  // namespace gpuscope::fleet::testing
