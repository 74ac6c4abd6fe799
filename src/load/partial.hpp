// The distributed analysis (docs/analysis.md "A job of thousands of GPUs"): N tasks started
// together by the job's own launcher (`srun gpuscope analyze --partial DIR runs/`) each read a
// contiguous share of the input files' samples, and meet through files in DIR, a directory
// every task sees (the shared filesystem the rank files are on):
//   context-of-N.bin      task 0: what only it fetches (the grid's intensity series);
//   activity-R-of-N.bin   task R's pass 1 (ActivityPart, exact) and its files' timestamp checks:
//                         every task adds them all, so all agree on the trimming window;
//   part-R-of-N.bin       task R's pass 2: each of its GPUs' prepared part, in GPU order, and the
//                         sketches and counts of them all;
//   failed-R-of-N.txt     task R failed, and why: the others stop waiting and say so. It
//                         carries the same fingerprint, the launch (srun's job and step) and
//                         the tasks whose failure or absence caused it, so a failure of an
//                         earlier run is not believed by this one (PartialDirectory::believed).
// Task 0 adds the parts in task order, which is GPU order, and prints what one `analyze` of the
// same files prints, to the bit. Each file is written under a temporary name and renamed, so a
// file that exists is whole; each carries a fingerprint of the inputs and options, so a file of
// another analysis is never read as this one's. A file is opened without following a link and
// without blocking (O_NOFOLLOW | O_NONBLOCK): anything but a regular file under a task's name (a
// FIFO, a link, a device) is refused with its name, never waited on.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyze/analyzer.hpp"
#include "core/grid_intensity.hpp"
#include "load/sources.hpp"
#include "load/time_axis.hpp"
#include "util/output_file.hpp"

namespace gpuscope::load {

struct PartialTask {
  unsigned index = 0;
  unsigned count = 1;
  // Which start of the tasks this is, where the launcher says ("slurm 812.3": srun's job and
  // step; "pmix NAMESPACE": Open MPI's); empty with --task, or a launcher that does not say.
  std::string launch;
};

// `given` ("R/N", from --task), else the launcher's environment (SLURM_PROCID/SLURM_NTASKS,
// Open MPI's OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE). Throws Error::usage without either.
// The launch is read from the environment only when the task number is too.
PartialTask partial_task(const std::optional<std::string>& given);

// The files task `task` reads the samples of: a contiguous share of `files` (the first tasks
// take one more where they do not divide evenly; a task may get none).
FileRange task_files(std::size_t files, PartialTask task);

// What must be the same for every task (FNV-1a 64): the format, the task count, each input
// file's path, size and modification time, and `options` (a text of the options that change
// the result).
std::uint64_t partial_fingerprint(const std::vector<std::filesystem::path>& files, PartialTask task,
                                  const std::string& options);

// A task's pass 1: its activity bins and the timestamp checks of its sources (Source::index).
struct ActivityShare {
  analyze::ActivityPart activity;
  std::vector<std::pair<std::size_t, TimeCheck>> checks;
};

// One GPU of a task's pass 2: which GPU (its run's place among the sources, its device index)
// and its prepared part, without sketches and counts.
struct DeviceShare {
  std::size_t source = 0;
  unsigned device = 0;
  analyze::PreparedDevice prepared;
};

class PartialDirectory {
 public:
  // Creates `dir` when missing; removes this task's own files of an earlier analysis.
  // `timeout_s`: how long to wait for another task's file with none arriving.
  PartialDirectory(std::filesystem::path dir, PartialTask task, std::uint64_t fingerprint,
                   double timeout_s);
  ~PartialDirectory();
  PartialDirectory(const PartialDirectory&) = delete;
  PartialDirectory& operator=(const PartialDirectory&) = delete;

  void write_context(const std::optional<IntensitySeries>& grid) const;  // task 0
  std::optional<IntensitySeries> read_context() const;                   // waits
  void write_activity(const ActivityShare& share) const;
  // Every other task's share, in task order (waits for each).
  void read_activities(const std::function<void(ActivityShare&&)>& each) const;

  // Task R's pass 2, written as its GPUs come (the file appears, renamed, at finish_part()).
  void add_device(DeviceShare&& device);
  void finish_part();
  // Task 0: every task's GPUs in task order, then each task's sketches and counts (waits).
  void read_parts(const std::function<void(DeviceShare&&)>& device,
                  const std::function<void(analyze::OverallCounts&&)>& counts) const;

  // Tells the others this task failed (they stop waiting and say why).
  void fail(const std::string& message) const noexcept;

  struct FileCloser {
    void operator()(std::FILE* file) const noexcept { (void)std::fclose(file); }
  };
  using InputFile = std::unique_ptr<std::FILE, FileCloser>;

 private:
  std::filesystem::path file(const std::string& kind, unsigned task) const;
  std::string header(const std::string& kind) const;
  // Waits until task `task`'s file of `kind` exists with this analysis' fingerprint; returns
  // it open after its header (for reading record by record), or its bytes after the header.
  InputFile wait_for(const std::string& kind, unsigned task) const;
  std::string read_whole(const std::string& kind, unsigned task) const;
  // Throws when another task of this run failed; notes a failure file it does not believe.
  void check_failures(std::string& ignored) const;
  // Whether task `task`'s failure file, whose first line is `head`, is this run's: the same
  // fingerprint; the same launch where either names one; and, with no launch to tell runs apart
  // (--task), not caused by this task (alive, so that failure was of an earlier run).
  bool believed(const std::string& head, std::set<unsigned>& caused_by) const;
  void publish(const std::string& kind, const std::string& bytes) const;

  std::filesystem::path dir_;
  PartialTask task_;
  std::uint64_t fingerprint_ = 0;
  double timeout_s_ = 3600;
  // The tasks whose failure or absence this task's failure comes from (written by fail()).
  mutable std::set<unsigned> caused_by_;
  std::unique_ptr<util::AtomicFile> part_;  // this task's pass 2 so far, under a temporary name
  analyze::OverallCounts counts_;
  std::uint64_t devices_ = 0;
};

}  // namespace gpuscope::load
