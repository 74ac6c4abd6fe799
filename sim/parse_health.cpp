// The "health" list of a faults object: steps of Xids, ECC errors, row remaps, retired pages,
// PCIe replays and NVLink errors at scenario times (docs/scenarios.md, "Health faults").
#include <algorithm>
#include <string>

#include "sim/json_reader.hpp"
#include "sim/parse_parts.hpp"

namespace gpuscope::sim {
namespace {

constexpr std::size_t kMaxSteps = 10000;
// A step's time: within the longest timeline the driver accepts (7 days).
constexpr Range kStepTime{0, 7.0 * 86400};
// Per step, so that 2 × 10000 steps (global and the GPU's own) cannot overflow NVML's 32-bit
// counters (remapped rows, retired pages, PCIe replays).
constexpr std::uint64_t kMax32 = 100000;
constexpr std::uint64_t kMax64 = 1'000'000'000'000ULL;
constexpr std::uint64_t kMaxXid = 999;  // 999: an Xid the driver cannot name (nvml.h)

std::uint32_t count32(ObjectReader& reader, std::string_view key) {
  return static_cast<std::uint32_t>(reader.unsigned_integer(key, 0, kMax32));
}

bool does_nothing(const HealthStep& step) {
  return step.xid == 0 && step.counts == HealthCounts{};
}

HealthStep parse_step(const nlohmann::json& value, const std::string& pointer) {
  ObjectReader reader(value, pointer);
  HealthStep step;
  step.at_s = reader.required_number("at_s", kStepTime);
  step.xid = static_cast<unsigned>(reader.unsigned_integer("xid", 0, kMaxXid));
  if (reader.has("xid") && step.xid == 0) {
    fail_at(reader.child("xid"), "an Xid is a number from 1 to 999");
  }
  step.counts.ecc_corrected = reader.unsigned_integer("ecc_corrected", 0, kMax64);
  step.counts.ecc_uncorrected = reader.unsigned_integer("ecc_uncorrected", 0, kMax64);
  step.counts.remapped_correctable = count32(reader, "remapped_correctable");
  step.counts.remapped_uncorrectable = count32(reader, "remapped_uncorrectable");
  step.counts.remap_pending = reader.boolean("remap_pending", false);
  step.counts.remap_failure = reader.boolean("remap_failure", false);
  step.counts.pcie_replays = count32(reader, "pcie_replays");
  step.counts.retired_sbe = count32(reader, "retired_sbe");
  step.counts.retired_dbe = count32(reader, "retired_dbe");
  step.counts.retired_pending = reader.boolean("retired_pending", false);
  step.counts.nvlink_replay_errors = reader.unsigned_integer("nvlink_replay_errors", 0, kMax64);
  step.counts.nvlink_recovery_errors = reader.unsigned_integer("nvlink_recovery_errors", 0, kMax64);
  step.counts.nvlink_crc_flit_errors = reader.unsigned_integer("nvlink_crc_flit_errors", 0, kMax64);
  step.counts.nvlink_crc_data_errors = reader.unsigned_integer("nvlink_crc_data_errors", 0, kMax64);
  reader.finish();
  if (does_nothing(step)) {
    fail_at(pointer,
            "a health step needs something besides at_s: an xid, a count above 0 or a flag set "
            "to true");
  }
  return step;
}

}  // namespace

void parse_health_steps(const nlohmann::json& value, const std::string& pointer,
                        std::vector<HealthStep>& steps) {
  if (!value.is_array()) fail_at(pointer, "expected an array of health steps");
  if (value.size() > kMaxSteps) {
    fail_at(pointer, std::to_string(value.size()) + " steps; at most " + std::to_string(kMaxSteps) +
                         " are allowed");
  }
  for (std::size_t i = 0; i < value.size(); ++i) {
    steps.push_back(parse_step(value[i], pointer + "/" + std::to_string(i)));
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const HealthStep& a, const HealthStep& b) { return a.at_s < b.at_s; });
}

}  // namespace gpuscope::sim
