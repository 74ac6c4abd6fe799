// The run database an import writes: each run through a RunWriter of its own into a part file
// in a private temporary folder, then all merged into the output (merge numbers the runs and
// refuses the same run twice). Nothing is left at the output when the import fails.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/device_description.hpp"
#include "core/run.hpp"
#include "store/run_writer.hpp"

namespace gpuscope::util {
class TemporaryFolder;
}

namespace gpuscope::ingest {

// What an import wrote, and what it left out and why.
struct ImportSummary {
  std::size_t runs = 0;
  std::size_t gpus = 0;
  std::int64_t samples = 0;
  std::vector<std::string> formats;  // the formats read ("gssr", "nvidia-smi-csv")
  std::vector<std::string> notes;
};

class RunTarget {
 public:
  // `output` must have passed the output checks (core/output_check.hpp).
  RunTarget(std::filesystem::path output, bool overwrite);
  ~RunTarget();
  RunTarget(const RunTarget&) = delete;
  RunTarget& operator=(const RunTarget&) = delete;

  // A writer for one more run, tuned for bulk writing (rare flushes).
  std::unique_ptr<store::RunWriter> add_run(const RunInfo& info,
                                            const std::vector<DeviceDescription>& devices);
  // Ends a run added by add_run: its end, its GPUs and samples counted, the writer's problems
  // kept as notes.
  void finish_run(store::RunWriter& writer, const RunEnd& end, std::size_t gpus);
  // What the reader left out, and why: said with the summary.
  std::vector<std::string>& notes() { return summary_.notes; }

  // Merges the runs into the output. Throws Error::usage when no run was added.
  ImportSummary finish();

 private:
  std::filesystem::path output_;
  bool overwrite_;
  std::unique_ptr<util::TemporaryFolder> parts_dir_;
  std::vector<std::filesystem::path> parts_;
  ImportSummary summary_;
};

}  // namespace gpuscope::ingest
