// Logs of `nvidia-smi dmon` (docs/logs.md): any -s selection and --gpm-metrics columns, with or
// without -o D/T date and time columns, as text or --format csv. Each file becomes one run, each
// GPU by its index. Where the log has no time of day, sample times are the tick count times the
// interval (--log-interval, else dmon's default -d 1) from --log-start or the file's end; what
// the log lacks stays NULL and is said.
#pragma once

#include "ingest/format.hpp"

namespace gpuscope::ingest {

class SmiDmonFormat final : public Format {
 public:
  std::string_view name() const override { return "nvidia-smi-dmon"; }
  std::string_view inputs() const override;
  bool recognises(const std::filesystem::path& path, const ReadOptions& options) const override;
  void read(const std::vector<std::filesystem::path>& inputs, const ReadOptions& options,
            RunTarget& target) const override;
};

}  // namespace gpuscope::ingest
