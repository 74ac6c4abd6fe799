// An AMD GPU's energy accumulator made into the energy counter the run database holds
// (energy_mj: monotonic millijoules, docs/amd.md). The accumulator counts units of its
// resolution (15.3 µJ); in the GPU metrics table's first format it is 32 bits wide and wraps
// every 2^32 × 15.3 µJ ≈ 65.7 kJ (about 90 s at 730 W); a GPU reset or a driver reload restarts it.
// A wrap is undone; a restart continues the series from where it was, said once as an event.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpuscope::collect {

class AmdEnergyCounter {
 public:
  // `max_power_w`: the most the GPU can draw (its maximum power cap, else a generous default);
  // what tells a wrap from a restart: a 32-bit wrap must imply no more energy than that power
  // could give in the time between the readings.
  explicit AmdEnergyCounter(std::optional<double> max_power_w);

  struct Reading {
    std::int64_t energy_mj = 0;        // the monotonic counter
    std::optional<std::string> event;  // the accumulator went back: what was done about it
  };
  // One reading: the raw count, its resolution (µJ per count), the driver's time stamp of it
  // (ns; 0 when there is none) and when gpuscope read it (monotonic ns). Readings come in time
  // order. The longer of the two times since the last reading bounds the energy.
  Reading add(std::uint64_t count, double resolution_uj, std::uint64_t timestamp_ns,
              std::int64_t mono_ns);

 private:
  // The most energy (µJ) that can have been consumed in `ns` nanoseconds.
  double bound_uj(std::int64_t ns) const;

  double max_power_w_;
  std::optional<std::uint64_t> last_count_;
  std::int64_t last_mono_ns_ = 0;
  std::uint64_t last_timestamp_ns_ = 0;
  double total_uj_ = 0;
};

}  // namespace gpuscope::collect
