// gssr's exported SQLite (`gssr analyze --export FILE`, docs/gssr.md): tables `data` (one row per
// sample: a column per metric and job_id, step_id, proc_id, gpu_id, sample_index, time),
// `process_metadata` and `job_metadata`, read through store's foreign-SQLite access. The result
// is gssr's own data (ingest/tools/gssr_process.hpp), converted by ingest/gssr_format.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ingest/tools/gssr_process.hpp"

namespace gpuscope::ingest::gssr {

// Whether `path` is an SQLite file with gssr's `job_metadata` table and no gpuscope `runs`.
bool is_export(const std::filesystem::path& path);

// One Process per (job, step, process) of the file, every GPU of it. Throws Error naming what is
// missing (a table, a metric column listed in job_metadata.metrics) or wrong.
std::vector<Process> read_export(const std::filesystem::path& path,
                                 std::vector<std::string>& notes);

}  // namespace gpuscope::ingest::gssr
