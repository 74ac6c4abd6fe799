// Where and when a job ran, for `gpuscope job`: SLURM's accounting through sacct (with the
// other jobs of its nodes, to know whether they were its alone), a pod from kube-state-metrics'
// series in the same monitoring database, or hosts and times given by the user.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ingest/monitoring/monitoring.hpp"
#include "tsdb/source.hpp"

namespace gpuscope::app {

// Runs `sacct` (a program in PATH, or a path) with `arguments`; its output. Throws Error when it
// fails or does not answer within `limit`, with `hint` (nullptr: how `job` reads SLURM).
std::string run_sacct(const std::string& sacct, const std::vector<std::string>& arguments,
                      std::chrono::seconds limit = std::chrono::seconds(60),
                      const char* hint = nullptr);
// GPUSCOPE_SACCT when set (a wrapper, or sacct with -M CLUSTER), else `fallback`.
std::string sacct_program(const std::string& fallback);

// The SLURM job `job_id` as `sacct` (the program, found in PATH) knows it.
ingest::JobWindow slurm_job_window(const std::string& sacct, const std::string& job_id,
                                   std::int64_t now_ms);

// The pod `namespace_and_name` ("ns/name") from kube-state-metrics' kube_pod_info,
// kube_pod_start_time and kube_pod_completion_time, looked for over the last `lookback_ms`.
ingest::JobWindow pod_window(tsdb::Source& source, const std::string& namespace_and_name,
                             std::int64_t now_ms, std::int64_t lookback_ms);

// Hosts between two times given by the user (Unix seconds or ISO 8601 with a zone; "now").
ingest::JobWindow hosts_window(const std::vector<std::string>& hosts,
                               const std::optional<std::string>& from,
                               const std::optional<std::string>& to, std::int64_t now_ms);

// A time option's value as Unix ms: "now", Unix seconds, or ISO 8601 with a zone.
std::int64_t time_option_ms(const std::string& option, const std::string& text,
                            std::int64_t now_ms);

}  // namespace gpuscope::app
