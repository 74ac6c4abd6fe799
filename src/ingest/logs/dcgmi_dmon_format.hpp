// Logs of `dcgmi dmon -e FIELDS` (docs/logs.md): the fields' short names as columns, one row per
// entity per tick. Each file becomes one run; GPUs by their DCGM id, MIG GPU instances (GPU-I)
// as devices of their own, 10000 + their DCGM entity id (core/mig.hpp: dcgmi names neither their
// GPU nor their GPU instance id). Values convert through dcgm/fields.hpp like live DCGM sampling.
// dcgmi prints no timestamps: sample times are the tick count times the interval
// (--log-interval, else dcgmi's default -d 1000) from --log-start or the file's end.
#pragma once

#include "ingest/format.hpp"

namespace gpuscope::ingest {

class DcgmiDmonFormat final : public Format {
 public:
  std::string_view name() const override { return "dcgmi-dmon"; }
  std::string_view inputs() const override;
  bool recognises(const std::filesystem::path& path, const ReadOptions& options) const override;
  void read(const std::vector<std::filesystem::path>& inputs, const ReadOptions& options,
            RunTarget& target) const override;
};

}  // namespace gpuscope::ingest
