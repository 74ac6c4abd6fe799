// Logs of `nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits] -l/-lms N`
// (docs/logs.md): each file (or each host of a file with a hostname column) becomes one run,
// each GPU by its index, uuid or bus id, or by its place in its sampling tick where the log
// names none. Power is integrated for energy (these logs have no counter); what the log lacks
// stays NULL and is said.
#pragma once

#include "ingest/format.hpp"

namespace gpuscope::ingest {

class SmiCsvFormat final : public Format {
 public:
  std::string_view name() const override { return "nvidia-smi-csv"; }
  std::string_view inputs() const override;
  bool recognises(const std::filesystem::path& path, const ReadOptions& options) const override;
  void read(const std::vector<std::filesystem::path>& inputs, const ReadOptions& options,
            RunTarget& target) const override;
};

// The problem every run of an nvidia-smi CSV log carries.
inline constexpr const char* kSmiCsvNotRecorded =
    "imported from an nvidia-smi --query-gpu log: nvidia-smi's CSV has no SM, tensor or DRAM "
    "activity (GPM), so the analysis rests on utilization.gpu";

}  // namespace gpuscope::ingest
