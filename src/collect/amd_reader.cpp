#include "collect/amd_reader.hpp"

#include <fmt/format.h>

#include "core/clock.hpp"

namespace gpuscope::collect {
namespace {

// Probes one call: whether to read it from now on. A GPU that cannot answer it (or may not be
// asked) gets a note; a transient failure keeps it, to be tried at every sample.
template <typename T>
bool probe(const amd::Device& device, unsigned index, const amd::Expected<T>& result,
           const char* what, std::vector<std::string>& notes) {
  if (result) return true;
  const amd::FailureKind kind = device.classify(result.error());
  if (kind == amd::FailureKind::Transient) return true;
  notes.push_back(fmt::format("GPU {}: {} not available ({}); it will be empty", index, what,
                              device.describe(result.error())));
  return false;
}

}  // namespace

AmdReader::AmdReader(const amd::Device& device, unsigned index, std::optional<double> max_power_w,
                     std::vector<std::string>& notes)
    : device_(device), index_(index), energy_counter_(max_power_w) {
  const auto check = [&](const auto& result, const char* what) {
    return probe(device_, index_, result, what, notes);
  };
  power_ = check(device_.average_power_w(), "average power");
  energy_ = check(device_.energy(), "the energy accumulator");
  activity_ = check(device_.activity(), "graphics activity");
  memory_ = check(device_.memory_used_bytes(), "memory used");
  if (auto total = device_.memory_total_bytes()) memory_total_bytes_ = *total;
  hotspot_ = check(device_.temperature_c(amd::Sensor::Hotspot), "the hotspot temperature");
  memory_temperature_ =
      check(device_.temperature_c(amd::Sensor::Memory), "the memory (HBM) temperature");
  clock_ = check(device_.gfx_clock_mhz(), "the graphics clock");
  cap_ = check(device_.power_cap(), "the power cap");
  table_ = check(device_.metrics_table(), "the GPU metrics table (XGMI bytes, throttle status)");
}

std::optional<std::int64_t> AmdReader::read_energy(ReadOutcome& outcome) {
  // Read and added under one lock: the two cadences' readings reach the counter in the order
  // they were taken, or a later count added first would look like the accumulator going back.
  std::lock_guard lock(energy_mutex_);
  const auto energy = device_.energy();
  if (!answered(energy, outcome)) return std::nullopt;
  auto reading = energy_counter_.add(energy->count, energy->resolution_uj, energy->timestamp_ns,
                                     mono_now_ns());
  if (reading.event) outcome.counter_event = std::move(reading.event);
  return reading.energy_mj;
}

void AmdReader::read_memory(SampleRow& row, ReadOutcome& outcome) const {
  const auto used = device_.memory_used_bytes();
  if (!answered(used, outcome)) return;
  row.set(Metric::MemoryUsedBytes, static_cast<double>(*used));
  if (memory_total_bytes_ && *memory_total_bytes_ >= *used) {
    row.set(Metric::MemoryFreeBytes, static_cast<double>(*memory_total_bytes_ - *used));
  }
}

void AmdReader::read_temperatures(SampleRow& row, ReadOutcome& outcome) const {
  if (hotspot_) {
    const auto c = device_.temperature_c(amd::Sensor::Hotspot);
    if (answered(c, outcome)) row.set(Metric::TemperatureC, *c);
  }
  if (memory_temperature_) {
    const auto c = device_.temperature_c(amd::Sensor::Memory);
    if (answered(c, outcome)) row.set(Metric::MemoryTemperatureC, *c);
  }
}

void AmdReader::read_activity(SampleRow& row, ReadOutcome& outcome) const {
  const auto activity = device_.activity();
  if (!answered(activity, outcome)) return;
  row.set(Metric::GpuUtilPct, activity->gfx);
  // A percentage over 100 is the library's "not available" (all ones).
  if (activity->umc && *activity->umc <= 100) row.set(Metric::UmcActivityPct, *activity->umc);
  if (activity->mm && *activity->mm <= 100) row.set(Metric::MmActivityPct, *activity->mm);
}

std::uint64_t folded_throttle_bits(std::uint64_t bits) {
  constexpr std::uint64_t kLow = (std::uint64_t{1} << 48) - 1;
  return (bits & kLow) | ((bits >> 56) << 48);
}

void AmdReader::read_metrics_table(SampleRow& row, ReadOutcome& outcome) const {
  const auto table = device_.metrics_table();
  if (!answered(table, outcome)) return;
  constexpr double kKib = 1024.0;  // the table counts "KB", taken as 1024 bytes (docs/amd.md)
  if (table->xgmi_read_kb) {
    row.set(Metric::XgmiReadBytes, static_cast<double>(*table->xgmi_read_kb) * kKib);
  }
  if (table->xgmi_write_kb) {
    row.set(Metric::XgmiWriteBytes, static_cast<double>(*table->xgmi_write_kb) * kKib);
  }
  if (table->indep_throttle_status) {
    row.set(Metric::AmdThrottleStatus,
            static_cast<double>(folded_throttle_bits(*table->indep_throttle_status)));
  }
}

ReadOutcome AmdReader::read(SampleRow& row, std::int64_t /*mono_ns*/, bool counter) {
  ReadOutcome outcome;
  row.device_index = index_;
  if (power_) {
    const auto w = device_.average_power_w();
    if (answered(w, outcome)) row.set(Metric::PowerW, *w);
  }
  if (energy_ && counter) {
    if (auto mj = read_energy(outcome)) row.set(Metric::EnergyMj, static_cast<double>(*mj));
  }
  if (activity_) read_activity(row, outcome);
  if (table_) read_metrics_table(row, outcome);
  if (memory_) read_memory(row, outcome);
  read_temperatures(row, outcome);
  if (clock_) {
    const auto mhz = device_.gfx_clock_mhz();
    if (answered(mhz, outcome)) {
      row.set(Metric::GraphicsClockMhz, *mhz);
      row.set(Metric::SmClockMhz, *mhz);  // the compute units run on the graphics clock
    }
  }
  if (cap_) {
    const auto cap = device_.power_cap();
    if (answered(cap, outcome)) {
      row.set(Metric::PowerLimitW, static_cast<double>(cap->current_uw) / 1e6);
    }
  }
  return outcome;
}

ReadOutcome AmdReader::read_power(PowerRow& row, bool counter) {
  ReadOutcome outcome;
  row.device_index = index_;
  if (power_) {
    const auto w = device_.average_power_w();
    if (answered(w, outcome)) row.power_w = *w;
  }
  if (energy_ && counter) row.energy_mj = read_energy(outcome);
  return outcome;
}

}  // namespace gpuscope::collect
