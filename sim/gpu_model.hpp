// One simulated GPU: its scenario phases turned into 100 ms buckets of activity, power,
// temperature and clocks, advanced lazily to the time of each query.
//
// Time is scenario time in nanoseconds since the scenario's zero. Buckets are 100 ms long, like
// the power readings of A100/H100 drivers. A bucket's values are fixed when the model enters it,
// from the state at its start (work done, temperature, the power cap in force) and deterministic
// noise, so querying often or rarely gives the same numbers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/levels.hpp"
#include "sim/scenario.hpp"
#include "sim/timeline.hpp"

namespace gpuscope::sim {

inline constexpr std::int64_t kBucketNs = 100'000'000;
inline constexpr double kBucketSeconds = 0.1;

// What the GPU does during one bucket.
struct Bucket {
  std::int64_t index = 0;
  Levels levels{};             // reported levels: activity-scaled and noisy
  double memory_used_mib = 0;  // allocated by processes (driver-reserved memory excluded)
  unsigned power_mw = 0;       // GPU power during the bucket
  double speed = 1;            // SM clock as a fraction of the maximum
  bool idle = true;            // no kernel ran (utilisation rounds to 0)
  bool cap_bound = false;      // the power cap held the clock down
  bool clock_locked = false;   // a locked maximum SM clock held the clock down
  double temperature_c = 0;    // at the bucket's start
  std::size_t phase = 0;       // phase at the bucket's start
};

// What held the clock down during a bucket, for the violation-time fields (74, 78, 269, 270).
enum class Violation : std::size_t { PowerCap, SwThermal, HwThermal, LowUtilization, Count };
inline constexpr std::size_t kViolationCount = static_cast<std::size_t>(Violation::Count);

// SM clocks locked by nvmlDeviceSetGpuLockedClocks; max_mhz 0: not locked.
struct LockedClocks {
  unsigned min_mhz = 0;
  unsigned max_mhz = 0;
  bool locked() const { return max_mhz != 0; }
  bool operator==(const LockedClocks&) const = default;
};

class GpuModel {
 public:
  // index is the GPU's position in the scenario; with seed it keys the noise. initial_limit_mw
  // is the power limit in force from time zero (0: the model's default limit), initial_lock the
  // locked clocks in force from time zero.
  GpuModel(const GpuConfig& config, std::uint64_t seed, std::size_t index,
           unsigned initial_limit_mw = 0, LockedClocks initial_lock = {});

  const GpuConfig& config() const { return config_; }

  // Moves the model forward to t_ns; earlier times are ignored (time never runs backwards).
  void advance_to(std::int64_t t_ns);
  std::int64_t time_ns() const { return time_ns_; }

  // Sets the power limit. It binds from the first bucket that starts at or after effective_ns
  // (a limit set mid-bucket takes hold at the next 100 ms tick, as the driver's control loop).
  void set_power_limit(unsigned milliwatts, std::int64_t effective_ns);
  unsigned power_limit_mw() const { return limit_mw_; }

  // Locks the SM clock into [min, max] (unlocked: LockedClocks{}). Like a limit, it binds from the
  // first bucket that starts at or after effective_ns. A maximum below max_sm_mhz caps the clock
  // fraction at max / max_sm_mhz; the minimum only keeps an idle GPU's clock up.
  void set_locked_clocks(LockedClocks lock, std::int64_t effective_ns);
  LockedClocks locked_clocks() const { return lock_; }

  const Bucket& bucket() const { return bucket_; }
  // The average of the last ten buckets (1 s), the current one included.
  unsigned power_average_mw() const;
  // What nvmlDeviceGetPowerUsage reports for this model (see PowerUsageMode).
  unsigned power_usage_mw() const;
  // Energy counter in mJ: a seed-dependent offset (the driver has been up for days) plus the
  // exact integral of bucket power up to time_ns().
  // The energy counter: the driver-uptime offset plus the integral of power over *wall* time.
  // With a time scale above 1 the scenario runs faster than the clock, and energy accrues per
  // wall second so the counter stays consistent with the power a sampler reads.
  unsigned long long energy_mj() const;
  void set_time_scale(double scale) { time_scale_ = scale; }
  // Energy since scenario time zero in µJ, exact: sum of power_mw * bucket time.
  std::uint64_t energy_uj() const;
  // Integral of each reported level over time up to time_ns() (level * seconds).
  Levels activity_integral() const;
  // Cumulative PCIe bytes (fields 197/198), with a seed-dependent starting offset.
  unsigned long long pcie_bytes(Activity direction) const;

  // Time the clock has been held down for this reason since scenario time zero, in ns of wall
  // time like the energy counter (scenario time / time scale), up to time_ns().
  unsigned long long violation_ns(Violation reason) const;

  unsigned sm_clock_mhz() const;
  unsigned long long clocks_event_reasons() const;
  // Work-seconds done since scenario time zero, at the current bucket's start.
  double work_done_s() const { return bucket_work_; }

  // The work rate of the steady compute phase (the first phase named "compute", else the
  // longest) under a cap: what a cooperating workload needs to pace itself.
  // lock_max_mhz (0: unlocked) is a locked maximum SM clock.
  double steady_speed(unsigned cap_mw, unsigned lock_max_mhz = 0) const;

 private:
  struct PendingLimit {
    std::int64_t effective_ns;
    unsigned milliwatts;
  };

  void enter_bucket(std::int64_t index);
  void finish_bucket();
  double noise(std::size_t metric) const;
  double thermal_speed() const;
  bool in_violation(Violation reason) const;
  double lock_speed(LockedClocks lock) const;

  GpuConfig config_;
  std::uint64_t seed_;
  std::size_t index_;
  Timeline timeline_;
  std::vector<Levels> phase_levels_;  // activity-scaled, clamped, noiseless
  std::vector<double> phase_demand_w_;
  std::size_t steady_phase_ = 0;
  double thermal_decay_ = 1;  // exp(-bucket / tau)

  unsigned limit_mw_ = 0;              // the limit last set (reported)
  unsigned active_cap_mw_ = 0;         // the limit the current bucket ran under
  std::vector<PendingLimit> pending_;  // sorted by effective_ns
  struct PendingLock {
    std::int64_t effective_ns;
    LockedClocks lock;
  };
  LockedClocks lock_;                       // the lock last set (reported)
  LockedClocks active_lock_;                // the lock the current bucket ran under
  std::vector<PendingLock> pending_locks_;  // sorted by effective_ns

  std::int64_t time_ns_ = 0;
  Bucket bucket_;
  double work_ = 0;         // work position, advanced through the current bucket already
  double bucket_work_ = 0;  // work position at the current bucket's start
  std::size_t phase_ = 0;
  double temperature_c_ = 0;
  Levels integral_at_bucket_{};
  std::uint64_t energy_uj_at_bucket_ = 0;
  std::array<std::int64_t, kViolationCount> violation_ns_at_bucket_{};  // scenario ns
  unsigned long long energy_offset_mj_ = 0;
  double time_scale_ = 1.0;
  std::array<unsigned long long, 2> pcie_offset_bytes_{};
  std::array<unsigned, 10> recent_power_mw_{};
  std::size_t recent_count_ = 0;
};

}  // namespace gpuscope::sim
