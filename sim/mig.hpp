// MIG in the simulated driver: the real GPU instance profiles of the models that can be
// partitioned, and one GPU instance's own load over time (docs/scenarios.md, "MIG").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "sim/levels.hpp"
#include "sim/scenario.hpp"
#include "sim/timeline.hpp"

namespace gpuscope::sim {

// One GPU instance profile as nvidia-smi mig -lgip lists it on the model.
struct MigProfile {
  std::string_view name;  // "1g.10gb"; a MIG device is named "<GPU name> MIG <name>"
  unsigned id = 0;        // the NVML profile ID (19 for 1g.*)
  unsigned compute_slices = 0;
  unsigned memory_slices = 0;  // of the GPU's 8
  unsigned max_count = 0;
  unsigned sms = 0;
  unsigned long long memory_mib = 0;  // nvmlDeviceAttributes_t::memorySizeMB
  unsigned copy_engines = 0, decoders = 0, jpegs = 0, ofas = 0;
  unsigned first_gi_id = 0, last_gi_id = 0;  // the GPU instance ids the driver gives it
};

// The MIG devices a partitioned GPU can hold (seven 1g instances).
inline constexpr unsigned kMaxMigDevices = 7;
inline constexpr unsigned kMigComputeSlices = 7;
inline constexpr unsigned kMigMemorySlices = 8;

// The profiles of a built-in model (empty: the model cannot do MIG in the simulator).
std::span<const MigProfile> mig_profiles(std::string_view model);
const MigProfile* find_mig_profile(std::string_view model, std::string_view name);

// One GPU instance's load: its phases from its creation time on, at full speed (the parent's
// clocks and power cap do not slow it), in noiseless 100 ms buckets.
class MigInstance {
 public:
  MigInstance(const MigInstanceSpec& spec, const MigProfile& profile);

  const MigInstanceSpec& spec() const { return spec_; }
  const MigProfile& profile() const { return *profile_; }
  // Whether the instance exists at scenario time t_ns (created, not yet destroyed).
  bool live_at(std::int64_t t_ns) const;
  // Moves forward to t_ns (scenario time); earlier times are ignored.
  void advance_to(std::int64_t t_ns);
  std::int64_t time_ns() const { return time_ns_; }
  const Levels& levels() const { return levels_; }
  double memory_used_mib() const { return memory_mib_; }
  // Integral of each level over time (level * seconds) from creation to time_ns().
  Levels activity_integral() const;

 private:
  void enter_bucket(std::int64_t index);

  MigInstanceSpec spec_;
  const MigProfile* profile_;
  Timeline timeline_;
  std::int64_t created_ns_ = 0;
  std::int64_t time_ns_ = 0;
  std::int64_t bucket_ = -1;
  Levels levels_{};
  double memory_mib_ = 0;
  Levels integral_at_bucket_{};
};

}  // namespace gpuscope::sim
