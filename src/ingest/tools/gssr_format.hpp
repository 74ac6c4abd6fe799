// gssr's data as gpuscope runs (docs/gssr.md): each gssr process becomes one run (launcher
// "gssr", its job, step, process, host, label and command as the run's fields), with gssr's
// DCGM values converted to gpuscope's units through the DCGM field table (dcgm/fields.hpp).
// Inputs: profile folders and process files (ingest/gssr_profile) and exported SQLite
// (ingest/gssr_export).
#pragma once

#include "ingest/format.hpp"

namespace gpuscope::ingest {

class GssrFormat final : public Format {
 public:
  std::string_view name() const override { return "gssr"; }
  std::string_view inputs() const override;
  bool recognises(const std::filesystem::path& path, const ReadOptions& options) const override;
  void read(const std::vector<std::filesystem::path>& inputs, const ReadOptions& options,
            RunTarget& target) const override;
};

// The problem every imported run carries: what gssr did not record, so that nothing is invented.
inline constexpr const char* kGssrNotRecorded =
    "imported from gssr, which records no power, energy, temperatures or clocks, and no clock of "
    "its own per sample: sample times are index x interval";

}  // namespace gpuscope::ingest
