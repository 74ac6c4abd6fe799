#include "collect/health_reader.hpp"

#include <iterator>

#include "collect/gpu_reader.hpp"

namespace gpuscope::collect {
namespace {

// The health counters NVML offers only as field values (nvml/abi.hpp).
struct FieldCandidate {
  unsigned field_id;
  unsigned scope;
  HealthMetric metric;
};
constexpr FieldCandidate kFieldCandidates[] = {
    {nvml::kFieldRetiredSbe, 0, HealthMetric::RetiredPagesSbe},
    {nvml::kFieldRetiredDbe, 0, HealthMetric::RetiredPagesDbe},
    {nvml::kFieldRetiredPending, 0, HealthMetric::RetiredPagesPending},
    {nvml::kFieldPerfPolicyPower, 0, HealthMetric::ViolationPowerNs},
    {nvml::kFieldPerfPolicyThermal, 0, HealthMetric::ViolationThermalNs},
    {nvml::kFieldPerfPolicySyncBoost, 0, HealthMetric::ViolationSyncBoostNs},
    {nvml::kFieldPerfPolicyBoardLimit, 0, HealthMetric::ViolationBoardLimitNs},
    {nvml::kFieldPerfPolicyLowUtilization, 0, HealthMetric::ViolationLowUtilNs},
    {nvml::kFieldPerfPolicyReliability, 0, HealthMetric::ViolationReliabilityNs},
    {nvml::kFieldPerfPolicyTotalAppClocks, 0, HealthMetric::ViolationAppClocksNs},
    {nvml::kFieldPerfPolicyTotalBaseClocks, 0, HealthMetric::ViolationBaseClocksNs},
    {nvml::kFieldClocksEventSwThermSlowdown, 0, HealthMetric::ViolationSwThermalNs},
    {nvml::kFieldClocksEventHwThermSlowdown, 0, HealthMetric::ViolationHwThermalNs},
    {nvml::kFieldClocksEventHwPowerBrakeSlowdown, 0, HealthMetric::ViolationPowerBrakeNs},
    {nvml::kFieldNvlinkCrcFlitErrorTotal, 0, HealthMetric::NvlinkCrcFlitErrors},
    {nvml::kFieldNvlinkCrcDataErrorTotal, 0, HealthMetric::NvlinkCrcDataErrors},
    {nvml::kFieldNvlinkReplayErrorTotal, 0, HealthMetric::NvlinkReplayErrors},
    {nvml::kFieldNvlinkRecoveryErrorTotal, 0, HealthMetric::NvlinkRecoveryErrors},
    {nvml::kFieldNvlinkThroughputDataTx, nvml::kScopeAllLinks, HealthMetric::NvlinkTxKib},
    {nvml::kFieldNvlinkThroughputDataRx, nvml::kScopeAllLinks, HealthMetric::NvlinkRxKib},
};

}  // namespace

HealthReader::HealthReader(nvml::Device device) : device_(std::move(device)) {
  probe();
}

template <typename T>
bool HealthReader::take(const nvml::Expected<T>& result) {
  if (result) return true;
  if (result.error().code == nvml::kErrorGpuIsLost) lost_ = true;
  return false;
}

bool HealthReader::any() const {
  return ecc_mode_ || ecc_counts_ || remapped_rows_ || pcie_replays_ || encoder_ || decoder_ ||
         !slots_.empty();
}

void HealthReader::probe() {
  // A GPU without ECC memory says NOT_SUPPORTED to all the ECC calls: probe once, skip after.
  ecc_mode_ = take(device_.ecc_mode());
  ecc_counts_ =
      take(device_.total_ecc_errors(nvml::MemoryError::Corrected, nvml::EccCounter::Volatile));
  remapped_rows_ = take(device_.remapped_rows());
  pcie_replays_ = take(device_.pcie_replay_counter());
  encoder_ = take(device_.encoder_utilization());
  decoder_ = take(device_.decoder_utilization());
  if (!lost_) probe_fields();
}

void HealthReader::probe_fields() {
  std::vector<nvmlFieldValue_t> values(std::size(kFieldCandidates));
  for (std::size_t k = 0; k < values.size(); ++k) {
    values[k].fieldId = kFieldCandidates[k].field_id;
    values[k].scopeId = kFieldCandidates[k].scope;
  }
  if (!device_.field_values(values)) return;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (values[k].nvmlReturn == nvml::kErrorGpuIsLost) lost_ = true;
    if (values[k].nvmlReturn != nvml::kSuccess) continue;
    slots_.push_back(
        {kFieldCandidates[k].field_id, kFieldCandidates[k].scope, kFieldCandidates[k].metric});
  }
  fields_.resize(slots_.size());
}

void HealthReader::read_ecc(HealthRow& row) {
  if (ecc_mode_) {
    const auto mode = device_.ecc_mode();
    if (take(mode)) row.set(HealthMetric::EccEnabled, mode->current ? 1 : 0);
  }
  if (!ecc_counts_) return;
  using nvml::EccCounter;
  using nvml::MemoryError;
  const struct {
    MemoryError type;
    EccCounter counter;
    HealthMetric metric;
  } counts[] = {
      {MemoryError::Corrected, EccCounter::Volatile, HealthMetric::EccCorrectedVolatile},
      {MemoryError::Uncorrected, EccCounter::Volatile, HealthMetric::EccUncorrectedVolatile},
      {MemoryError::Corrected, EccCounter::Aggregate, HealthMetric::EccCorrectedAggregate},
      {MemoryError::Uncorrected, EccCounter::Aggregate, HealthMetric::EccUncorrectedAggregate},
  };
  for (const auto& count : counts) {
    const auto value = device_.total_ecc_errors(count.type, count.counter);
    if (take(value)) row.set(count.metric, static_cast<double>(*value));
  }
}

void HealthReader::read_calls(HealthRow& row) {
  if (remapped_rows_) {
    const auto rows = device_.remapped_rows();
    if (take(rows)) {
      row.set(HealthMetric::RemappedRowsCorrectable, rows->corrected);
      row.set(HealthMetric::RemappedRowsUncorrectable, rows->uncorrected);
      row.set(HealthMetric::RowRemapPending, rows->pending ? 1 : 0);
      row.set(HealthMetric::RowRemapFailure, rows->failure ? 1 : 0);
    }
  }
  if (pcie_replays_) {
    const auto replays = device_.pcie_replay_counter();
    if (take(replays)) row.set(HealthMetric::PcieReplays, *replays);
  }
  if (encoder_) {
    const auto encoder = device_.encoder_utilization();
    if (take(encoder)) row.set(HealthMetric::EncoderUtilPct, encoder->percent);
  }
  if (decoder_) {
    const auto decoder = device_.decoder_utilization();
    if (take(decoder)) row.set(HealthMetric::DecoderUtilPct, decoder->percent);
  }
}

void HealthReader::read_fields(HealthRow& row) {
  if (slots_.empty()) return;
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    fields_[k] = nvmlFieldValue_t{};
    fields_[k].fieldId = slots_[k].field_id;
    fields_[k].scopeId = slots_[k].scope;
  }
  if (auto status = device_.field_values(fields_); !status) {
    if (status.error().code == nvml::kErrorGpuIsLost) lost_ = true;
    return;
  }
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    if (fields_[k].nvmlReturn == nvml::kErrorGpuIsLost) lost_ = true;
    if (const auto value = nvml::field_as_double(fields_[k])) row.set(slots_[k].metric, *value);
  }
}

bool HealthReader::read(HealthRow& row) {
  if (lost_) return false;
  row.device_index = device_.index();
  read_ecc(row);
  if (!lost_) read_calls(row);
  if (!lost_) read_fields(row);
  return !lost_;
}

std::unique_ptr<HealthReader> GpuReader::health_reader() const {
  return nullptr;
}

}  // namespace gpuscope::collect
