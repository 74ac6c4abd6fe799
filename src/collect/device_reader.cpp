#include "collect/device_reader.hpp"

#include <fmt/format.h>

#include "collect/health_reader.hpp"

namespace gpuscope::collect {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// GPM metric ids gpuscope records, the catalog entry each fills, and the factor to its unit.
struct GpmMapping {
  unsigned gpm_id;
  Metric metric;
  double scale;
};
constexpr GpmMapping kGpmMappings[] = {
    {nvml::kGpmGraphicsUtil, Metric::GraphicsActivePct, 1.0},
    {nvml::kGpmSmUtil, Metric::SmActivePct, 1.0},
    {nvml::kGpmSmOccupancy, Metric::SmOccupancyPct, 1.0},
    {nvml::kGpmAnyTensorUtil, Metric::TensorActivePct, 1.0},
    {nvml::kGpmDfmaTensorUtil, Metric::DfmaTensorActivePct, 1.0},
    {nvml::kGpmHmmaTensorUtil, Metric::HmmaTensorActivePct, 1.0},
    {nvml::kGpmImmaTensorUtil, Metric::ImmaTensorActivePct, 1.0},
    {nvml::kGpmDramBwUtil, Metric::DramActivePct, 1.0},
    {nvml::kGpmFp64Util, Metric::Fp64ActivePct, 1.0},
    {nvml::kGpmFp32Util, Metric::Fp32ActivePct, 1.0},
    {nvml::kGpmFp16Util, Metric::Fp16ActivePct, 1.0},
    {nvml::kGpmIntegerUtil, Metric::IntegerActivePct, 1.0},
    {nvml::kGpmPcieTxPerSec, Metric::PcieTxBytesPerS, kMiB},  // GPM reports MiB/s
    {nvml::kGpmPcieRxPerSec, Metric::PcieRxBytesPerS, kMiB},
    {nvml::kGpmNvlinkTotalTxPerSec, Metric::NvlinkTxBytesPerS, kMiB},
    {nvml::kGpmNvlinkTotalRxPerSec, Metric::NvlinkRxBytesPerS, kMiB},
};

bool is_unsupported(nvmlReturn_t code) {
  return code == nvml::kErrorNotSupported || code == nvml::kErrorFunctionNotFound ||
         code == nvml::kErrorNoPermission || code == nvml::kErrorInvalidArgument;
}

template <typename T>
bool probe_call(const nvml::Expected<T>& result, const char* what, bool& lost,
                std::vector<std::string>& notes, const nvml::Library& library, unsigned index) {
  if (result) return true;
  if (result.error().code == nvml::kErrorGpuIsLost) {
    lost = true;
  } else if (is_unsupported(result.error().code)) {
    notes.push_back(fmt::format("GPU {}: {} not available ({}); it will be empty", index, what,
                                library.error_string(result.error().code)));
  } else {
    // A transient failure at probe time: keep trying while sampling rather than give up.
    return true;
  }
  return false;
}

}  // namespace

DeviceReader::DeviceReader(nvml::Device device, std::vector<std::string>& notes,
                           SaturationReading saturation)
    : device_(std::move(device)), dcgm_(std::move(saturation.dcgm)) {
  probe(notes, saturation.gpm);
}

void DeviceReader::probe(std::vector<std::string>& notes, bool gpm) {
  const auto& lib = device_.library();
  const unsigned i = device_.index();
  auto check = [&](const auto& result, const char* what) {
    bool lost = false;
    const bool supported = probe_call(result, what, lost, notes, lib, i);
    if (lost) lost_.value = true;
    return supported;
  };
  probe_mig_mode();
  power_usage_ = check(device_.power_usage_mw(), "power usage");
  energy_ = check(device_.total_energy_mj(), "the energy counter");
  power_limit_ = check(device_.enforced_power_limit_mw(), "the enforced power limit");
  utilization_ = check(device_.utilization(), mig_mode_at_start_ == true
                                                  ? "utilization (none for a GPU in MIG mode)"
                                                  : "utilization");
  sm_clock_ = check(device_.clock_mhz(nvml::ClockType::Sm), "the SM clock");
  mem_clock_ = check(device_.clock_mhz(nvml::ClockType::Memory), "the memory clock");
  graphics_clock_ = check(device_.clock_mhz(nvml::ClockType::Graphics), "the graphics clock");
  temperature_ = check(device_.temperature_c(), "temperature");
  memory_ = check(device_.memory(), mig_mode_at_start_ == true
                                        ? "memory usage (its MIG devices' is read on each)"
                                        : "memory usage");
  reasons_ = check(device_.clock_event_reasons(), "clock event reasons");
  if (lost()) return;
  probe_fields(notes);
  if (gpm) probe_gpm(notes);
}

void DeviceReader::probe_fields(std::vector<std::string>& notes) {
  const FieldSlot candidates[] = {
      {nvml::kFieldPowerInstant, nvml::kPowerScopeGpu, Metric::PowerInstantW},
      {nvml::kFieldPowerAverage, nvml::kPowerScopeGpu, Metric::PowerAverageW},
      {nvml::kFieldPowerInstant, nvml::kPowerScopeModule, Metric::ModulePowerW},
      {nvml::kFieldMemoryTemp, 0, Metric::MemoryTemperatureC},
      {nvml::kFieldPcieCountTxBytes, 0, Metric::PcieTxBytes},
      {nvml::kFieldPcieCountRxBytes, 0, Metric::PcieRxBytes},
  };
  std::vector<nvmlFieldValue_t> values(std::size(candidates));
  for (std::size_t k = 0; k < values.size(); ++k) {
    values[k].fieldId = candidates[k].field_id;
    values[k].scopeId = candidates[k].scope;
  }
  if (auto status = device_.field_values(values); !status) {
    notes.push_back(
        fmt::format("GPU {}: field values not available ({}); instant power, memory "
                    "temperature and PCIe counters will be empty",
                    device_.index(), device_.library().error_string(status.error().code)));
    return;
  }
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (values[k].nvmlReturn == nvml::kSuccess) {
      field_slots_.push_back(candidates[k]);
      if (candidates[k].metric == Metric::PowerInstantW) power_instant_field_ = true;
    } else if (candidates[k].metric != Metric::ModulePowerW) {
      // Module power exists only on Grace Hopper modules; its absence elsewhere is not news.
      notes.push_back(fmt::format("GPU {}: {} not available ({}); it will be empty",
                                  device_.index(), info(candidates[k].metric).name,
                                  device_.library().error_string(values[k].nvmlReturn)));
    }
  }
  fields_.resize(field_slots_.size());
  for (std::size_t k = 0; k < field_slots_.size(); ++k) {
    fields_[k].fieldId = field_slots_[k].field_id;
    fields_[k].scopeId = field_slots_[k].scope;
  }
}

void DeviceReader::probe_gpm(std::vector<std::string>& notes) {
  if (auto why = open_gpm()) {
    notes.push_back(fmt::format(
        "GPU {} {}; saturation metrics (SM active, occupancy, tensor, FP64/32/16, DRAM, PCIe, "
        "NVLink) will be empty for it",
        device_.index(), *why));
  }
}

nvml::Status DeviceReader::take_gpm(nvml::GpmSample& sample) const {
  return mig_ ? sample.take_mig(mig_->parent, mig_->gpu_instance_id) : sample.take(device_);
}

std::optional<std::string> DeviceReader::open_gpm() {
  // A GPU instance's GPM is asked of its parent GPU (nvmlGpmMigSampleGet).
  const nvml::Device& gpu = mig_ ? mig_->parent : device_;
  const auto supported = gpu.gpm_supported();
  if (!supported || !*supported) return "does not support GPM";
  auto first = nvml::GpmSample::allocate(device_.shared_library());
  auto second = nvml::GpmSample::allocate(device_.shared_library());
  if (!first || !second) return "cannot allocate GPM samples";
  if (auto status = take_gpm(*first); !status) {
    return fmt::format("cannot take GPM samples ({})",
                       device_.library().error_string(status.error().code));
  }
  std::vector<unsigned> ids;
  for (const auto& mapping : kGpmMappings) {
    ids.push_back(mapping.gpm_id);
    gpm_metrics_.push_back(mapping.metric);
    gpm_scale_.push_back(mapping.scale);
  }
  gpm_values_.resize(ids.size());
  gpm_.emplace(
      Gpm{*std::move(first), *std::move(second), nvml::GpmQuery(device_.shared_library(), ids), 0});
  return std::nullopt;
}

void DeviceReader::note_failure(const nvml::Failure& failure, ReadOutcome& outcome) {
  if (failure.code == nvml::kErrorGpuIsLost) {
    lost_.value = true;
    outcome.lost = true;
  } else {
    ++outcome.failed_calls;
  }
}

ReadOutcome DeviceReader::read(SampleRow& row, std::int64_t mono_ns, bool counter) {
  if (mig_) return read_mig(row, mono_ns);
  ReadOutcome outcome;
  if (lost()) return outcome;
  row.device_index = device_.index();
  auto take = [&](const auto& result, Metric metric, double scale) {
    if (result) {
      row.set(metric, static_cast<double>(*result) * scale);
    } else {
      note_failure(result.error(), outcome);
    }
  };
  if (power_usage_) take(device_.power_usage_mw(), Metric::PowerW, 1e-3);
  if (energy_ && counter) take(device_.total_energy_mj(), Metric::EnergyMj, 1.0);
  if (power_limit_) take(device_.enforced_power_limit_mw(), Metric::PowerLimitW, 1e-3);
  if (utilization_) {
    if (auto u = device_.utilization()) {
      row.set(Metric::GpuUtilPct, u->gpu_percent);
      row.set(Metric::MemUtilPct, u->memory_percent);
    } else {
      note_failure(u.error(), outcome);
    }
  }
  if (sm_clock_) take(device_.clock_mhz(nvml::ClockType::Sm), Metric::SmClockMhz, 1.0);
  if (mem_clock_) take(device_.clock_mhz(nvml::ClockType::Memory), Metric::MemClockMhz, 1.0);
  if (graphics_clock_) {
    take(device_.clock_mhz(nvml::ClockType::Graphics), Metric::GraphicsClockMhz, 1.0);
  }
  if (temperature_) take(device_.temperature_c(), Metric::TemperatureC, 1.0);
  if (memory_) read_memory(row, outcome);
  if (reasons_) take(device_.clock_event_reasons(), Metric::ClockEventReasons, 1.0);
  if (!fields_.empty() && !lost()) read_fields(row, outcome);
  if (gpm_ && !lost()) read_gpm(row, mono_ns, outcome);
  if (dcgm_ && !lost())
    outcome.source_event = dcgm_->read(device_.index(), row, outcome.failed_calls);
  if (mig_mode_at_start_ && !lost()) check_mig(mono_ns, outcome);
  return outcome;
}

void DeviceReader::read_memory(SampleRow& row, ReadOutcome& outcome) {
  if (auto m = device_.memory()) {
    row.set(Metric::MemoryUsedBytes, static_cast<double>(m->used_bytes));
    row.set(Metric::MemoryFreeBytes, static_cast<double>(m->free_bytes));
    if (m->reserved_bytes > 0) {
      row.set(Metric::MemoryReservedBytes, static_cast<double>(m->reserved_bytes));
    }
  } else {
    note_failure(m.error(), outcome);
  }
}

void DeviceReader::read_fields(SampleRow& row, ReadOutcome& outcome) {
  auto status = device_.field_values(fields_);
  if (!status) {
    note_failure(status.error(), outcome);
    return;
  }
  for (std::size_t k = 0; k < fields_.size(); ++k) {
    if (fields_[k].nvmlReturn == nvml::kErrorGpuIsLost) {
      note_failure({nvml::kErrorGpuIsLost, "nvmlDeviceGetFieldValues"}, outcome);
      return;
    }
    auto value = nvml::field_as_double(fields_[k]);
    if (!value) continue;
    const Metric metric = field_slots_[k].metric;
    const bool milliwatts = metric == Metric::PowerInstantW || metric == Metric::PowerAverageW ||
                            metric == Metric::ModulePowerW;
    row.set(metric, milliwatts ? *value * 1e-3 : *value);
  }
}

void DeviceReader::read_gpm(SampleRow& row, std::int64_t mono_ns, ReadOutcome& outcome) {
  Gpm& gpm = *gpm_;
  if (gpm.previous_mono_ns == 0) gpm.previous_mono_ns = mono_ns;  // the probe took the first
  const auto min_interval_ns = static_cast<std::int64_t>(nvml::kGpmMinIntervalSeconds * 1e9);
  if (mono_ns - gpm.previous_mono_ns < min_interval_ns) return;
  if (auto status = take_gpm(gpm.next); !status) {
    note_failure(status.error(), outcome);
    return;
  }
  if (auto status = gpm.query.compute(gpm.previous, gpm.next, gpm_values_); !status) {
    note_failure(status.error(), outcome);
  } else {
    for (std::size_t k = 0; k < gpm_values_.size(); ++k) {
      if (gpm_values_[k]) row.set(gpm_metrics_[k], *gpm_values_[k] * gpm_scale_[k]);
    }
  }
  std::swap(gpm.previous, gpm.next);
  gpm.previous_mono_ns = mono_ns;
}

ReadOutcome DeviceReader::read_power(PowerRow& row, bool counter) {
  ReadOutcome outcome;
  if (lost() || mig_) return outcome;  // a MIG device's power is its parent's
  row.device_index = device_.index();
  if (power_usage_) {
    if (auto p = device_.power_usage_mw()) {
      row.power_w = *p * 1e-3;
    } else {
      note_failure(p.error(), outcome);
    }
  }
  if (energy_ && counter) {
    if (auto e = device_.total_energy_mj()) {
      row.energy_mj = static_cast<double>(*e);
    } else {
      note_failure(e.error(), outcome);
    }
  }
  if (power_instant_field_) {
    nvmlFieldValue_t value{};
    value.fieldId = nvml::kFieldPowerInstant;
    value.scopeId = nvml::kPowerScopeGpu;
    if (auto status = device_.field_values({&value, 1}); !status) {
      note_failure(status.error(), outcome);
    } else if (auto v = nvml::field_as_double(value)) {
      row.power_instant_w = *v * 1e-3;
    }
  }
  return outcome;
}

std::unique_ptr<HealthReader> DeviceReader::health_reader() const {
  return std::make_unique<HealthReader>(device_);
}

}  // namespace gpuscope::collect
