// Reads one AMD GPU (a GCD) through AMD SMI or ROCm SMI into the run's columns (docs/amd.md has
// the mapping): average socket power, the energy accumulator made monotonic, graphics activity as
// the utilisation, UMC and multimedia activity, VRAM used and free, hotspot and HBM temperatures,
// the graphics clock (the compute units' clock, stored as SM and graphics clock), the power cap,
// and from the GPU metrics table the XGMI byte counters and the throttle bits. Every call is probed
// once; a call the GPU cannot answer is skipped from then on (its column stays empty, never 0).
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "amd/session.hpp"
#include "collect/amd_energy.hpp"
#include "collect/gpu_reader.hpp"

namespace gpuscope::collect {

// The metrics table's throttle bits as stored: bits 56-63 (the "other" throttlers: PPM, FIT)
// moved to 48-55, which the driver leaves unused, so the bitmask stays exact in a double.
std::uint64_t folded_throttle_bits(std::uint64_t bits);

class AmdReader final : public GpuReader {
 public:
  // `device` belongs to an amd::Session that outlives the reader; `index` is the device's index
  // in the run; `max_power_w` its maximum power cap, when known (AmdEnergyCounter). `notes`
  // receives one line per reading the GPU does not offer.
  AmdReader(const amd::Device& device, unsigned index, std::optional<double> max_power_w,
            std::vector<std::string>& notes);

  unsigned index() const override { return index_; }
  // No AMD call says "fell off the bus" as NVML's GPU_IS_LOST does: a GPU that stops answering
  // counts failed calls and produces no rows (docs/amd.md).
  bool lost() const override { return false; }
  ReadOutcome read(SampleRow& row, std::int64_t mono_ns, bool counter) override;
  ReadOutcome read_power(PowerRow& row, bool counter) override;

 private:
  // Whether `result` answered; a failure is counted in `outcome`.
  template <typename T>
  bool answered(const amd::Expected<T>& result, ReadOutcome& outcome) const {
    if (result) return true;
    ++outcome.failed_calls;
    return false;
  }
  // The energy counter now, in mJ (monotonic), with its event when the accumulator went back.
  std::optional<std::int64_t> read_energy(ReadOutcome& outcome);
  void read_memory(SampleRow& row, ReadOutcome& outcome) const;
  void read_temperatures(SampleRow& row, ReadOutcome& outcome) const;
  void read_activity(SampleRow& row, ReadOutcome& outcome) const;
  void read_metrics_table(SampleRow& row, ReadOutcome& outcome) const;

  const amd::Device& device_;
  unsigned index_;
  std::optional<std::uint64_t> memory_total_bytes_;
  bool power_ = false, energy_ = false, activity_ = false, memory_ = false, hotspot_ = false;
  bool memory_temperature_ = false, clock_ = false, cap_ = false, table_ = false;
  std::mutex energy_mutex_;  // read() and read_power() run on different threads
  AmdEnergyCounter energy_counter_;
};

}  // namespace gpuscope::collect
