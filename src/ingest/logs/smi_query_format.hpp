// Logs of nvidia-smi's detailed query (docs/logs.md): `nvidia-smi -q -l 5 > gpu.log`, or a loop of
// `nvidia-smi -q`. Each block (the "NVSMI LOG" line, its Timestamp, the driver, one section per
// GPU) is one sample per GPU at the Timestamp's local time, in --timezone; the GPUs' indexes are
// their order in the block (nvidia-smi's); the processes go to the run's process tables. Each file
// is one run; a block cut off (the end of the file, or the next block's line before its GPUs were
// all printed) is left out whole, with a note.
#pragma once

#include "ingest/format.hpp"

namespace gpuscope::ingest {

class SmiQueryFormat final : public Format {
 public:
  std::string_view name() const override { return "nvidia-smi-query"; }
  std::string_view inputs() const override;
  bool recognises(const std::filesystem::path& path, const ReadOptions& options) const override;
  void read(const std::vector<std::filesystem::path>& inputs, const ReadOptions& options,
            RunTarget& target) const override;
};

}  // namespace gpuscope::ingest
