#include "app/profile/profile_options.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace gpuscope::app {

void validate(const ProfileOptions& o) {
  if (o.command.empty() && o.wrap.empty()) {
    throw Error::usage("no command to profile", {},
                       "give one after --, e.g. gpuscope profile -o run.db -- python train.py, "
                       "or as a string with --wrap \"python train.py\"");
  }
  if (!o.command.empty() && !o.wrap.empty()) {
    throw Error::usage("both --wrap and a command after -- were given", {}, "use one of them");
  }
  if (o.sampling_ms < kMinSamplingMs) {
    throw Error::usage(
        fmt::format("--sampling-ms {} is below the floor of {} ms", o.sampling_ms, kMinSamplingMs),
        {}, "use --power-sampling-ms for faster power and energy readings");
  }
  if (o.power_sampling_ms != 0 && o.power_sampling_ms < kMinPowerSamplingMs) {
    throw Error::usage(fmt::format("--power-sampling-ms {} is below the floor of {} ms",
                                   o.power_sampling_ms, kMinPowerSamplingMs),
                       "NVML does not refresh power faster than that", {});
  }
  if (o.power_sampling_ms != 0 && o.power_sampling_ms > o.sampling_ms) {
    throw Error::usage(fmt::format("--power-sampling-ms {} is slower than --sampling-ms {}",
                                   o.power_sampling_ms, o.sampling_ms),
                       {}, "power is always sampled at the main cadence; drop the option");
  }
  if (o.energy_counter_ms != 0 && o.energy_counter_ms < o.sampling_ms &&
      (o.power_sampling_ms == 0 || o.energy_counter_ms < o.power_sampling_ms)) {
    throw Error::usage(fmt::format("--energy-counter-ms {} is faster than any sampling cadence",
                                   o.energy_counter_ms),
                       "the counter is read at a sample or a power reading",
                       "leave it out to read the counter at every sample");
  }
  if (o.max_runtime_s < 0) throw Error::usage("--max-runtime must be 0 (none) or positive");
  if (o.kill_grace_s < 0) throw Error::usage("--kill-grace must be 0 or positive");
}

}  // namespace gpuscope::app
