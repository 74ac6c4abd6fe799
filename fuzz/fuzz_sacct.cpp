// libFuzzer target: sacct's allocation lines as `gpuscope jobs` reads them (fleet/sacct_jobs),
// the site's accounting as slurmdbd prints it, job names and all. read_sacct_jobs never throws;
// every line is a job, a job without GPUs, one never started or an unreadable line, counted
// once, and no line is two; at most 5 unreadable lines are quoted, each at most 200 bytes of it
// and its reason; a job has an id, GPUs and an end not before its start.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fleet/sacct_jobs.hpp"
#include "fuzz_file.hpp"

using gpuscope::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr std::int64_t kNow = 1795600800000;  // 2026-11-25T10:00:00Z
  const auto read = gpuscope::fleet::read_sacct_jobs(text, kNow);
  std::size_t lines = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    if (end > begin) ++lines;
    begin = end + 1;
  }
  require(read.jobs.size() + read.without_gpus + read.not_started + read.unreadable_count == lines);
  require(read.unreadable.size() == std::min<std::size_t>(read.unreadable_count, 5));
  for (const auto& quoted : read.unreadable) require(!quoted.empty());
  for (const auto& job : read.jobs) {
    require(!job.id.empty());
    require(job.gpus > 0);
    require(job.end_ms >= job.start_ms);
  }
  return 0;
}
