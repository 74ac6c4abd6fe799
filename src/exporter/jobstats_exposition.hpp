// The /metrics page in the shape of Princeton jobstats' GPU exporter (a fork of
// nvidia_gpu_prometheus_exporter, github.com/plazonic/nvidia_gpu_prometheus_exporter), so
// jobstats' queries, its Grafana dashboard and gpudash work on `gpuscope serve --naming jobstats`
// (docs/live.md, "jobstats names").
//
// Every GPU series carries the labels GPU_I_ID, jobid, minor_number, name, ordinal, userid and
// uuid (sorted, as that exporter's Prometheus client writes them); jobid and userid are the SLURM
// job using the GPU and its user's uid, empty when there is none. nvidia_gpu_jobId and
// nvidia_gpu_jobUid carry the same as their VALUES, and exist only while a job uses the GPU.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "exporter/gpu_identity.hpp"
#include "exporter/latest_values.hpp"
#include "exporter/process_exposition.hpp"

namespace gpuscope::exporter {

// `workload` is workload_labels(…, Naming::Jobstats): per GPU, its `jobid` and `userid`.
std::string render_jobstats(const Snapshot& snapshot, const std::vector<GpuIdentity>& gpus,
                            const std::map<unsigned, LabelList>& workload);

// The exporter's words for the set bits of a clock-event bitmask, comma-separated in bit order
// ("swpowercap,hwslowdown"); "none" for 0.
std::string jobstats_clock_reasons(std::uint64_t mask);

}  // namespace gpuscope::exporter
