// Logs of nvidia-smi's human table (docs/logs.md): `nvidia-smi -l 5 > gpu.log`, a loop of
// `nvidia-smi` calls, `watch nvidia-smi` as `script` or a pipe keeps it. Each snapshot (a date
// line, the banner, one block per GPU, the process table) is one sample per GPU at the date line's
// local time, in --timezone; the processes go to the run's process tables. Each file is one run;
// a snapshot cut off (the end of the file, or the next date line before its process table
// closed) is left out whole, with a note.
#pragma once

#include "ingest/format.hpp"

namespace gpuscope::ingest {

class SmiTableFormat final : public Format {
 public:
  std::string_view name() const override { return "nvidia-smi-table"; }
  std::string_view inputs() const override;
  bool recognises(const std::filesystem::path& path, const ReadOptions& options) const override;
  void read(const std::vector<std::filesystem::path>& inputs, const ReadOptions& options,
            RunTarget& target) const override;
};

}  // namespace gpuscope::ingest
