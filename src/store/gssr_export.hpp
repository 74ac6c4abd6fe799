// gssr's exported SQLite (`gssr analyze --export FILE`, docs/gssr.md): tables `data` (one row per
// sample: a column per metric and job_id, step_id, proc_id, gpu_id, sample_index, time),
// `process_metadata` and `job_metadata`. Read here because store/ is the only code that speaks
// SQLite; the result is gssr's own data (core/gssr.hpp), converted by app/gssr_import.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/gssr.hpp"

namespace gpuscope::store {

// Whether `path` is an SQLite file with gssr's `job_metadata` table and no gpuscope `runs`.
bool is_gssr_export(const std::filesystem::path& path);

// One Process per (job, step, process) of the file, every GPU of it. Throws Error naming what is
// missing (a table, a metric column listed in job_metadata.metrics) or wrong.
std::vector<gssr::Process> read_gssr_export(const std::filesystem::path& path,
                                            std::vector<std::string>& notes);

}  // namespace gpuscope::store
