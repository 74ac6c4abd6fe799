// gssr's profile folders (docs/gssr.md): profile_out_JobID_<job>/<label>_job_<j>_step_<s>/
// <label>_job_<j>_step_<s>_proc_<p>.json, one file per process as gssr's `profile` writes them
// under srun, with any number of GPUs per process.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ingest/tools/gssr_process.hpp"

namespace gpuscope::ingest::gssr {

// Whether `path` is gssr profile data: a directory holding `*_proc_*.json` files (at most three
// levels down), or one such file. Cheap: names only.
bool is_profile_input(const std::filesystem::path& path);

// What reading a folder found besides the processes.
struct ProfileRead {
  std::vector<Process> processes;  // in file name order
  std::vector<std::string> notes;  // files left out, metrics gssr does not write, ...
};

// Reads every process file of a folder, or one file. Throws Error naming the file and what is
// wrong with it (JSON cut short, a key missing or of the wrong type, series of unequal length),
// or naming a folder that cannot be read (the analysis would be incomplete).
ProfileRead read_profile(const std::filesystem::path& path);

// Parses one process file's text (`name` for messages). Python's json writes NaN and Infinity as
// bare words, which are not JSON: they are read as missing values.
Process parse_process(const std::string& text, const std::string& name,
                      std::vector<std::string>& notes);

}  // namespace gpuscope::ingest::gssr
