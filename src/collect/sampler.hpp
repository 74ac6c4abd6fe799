// The sampling loop: reads every selected GPU at a fixed cadence on absolute deadlines (no
// drift), and power at an optional faster cadence, handing rows to a SampleSink. Each physical
// GPU has a thread of its own (a lane) that keeps both cadences of that GPU and its MIG devices,
// so that one GPU's slow driver call (the energy counter costs 3.8 ms on an H200) never delays
// another GPU's samples (docs/performance.md, "Real driver costs"). It never throws into its
// caller and never stops the job: failures become events and counters.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "collect/gpu_reader.hpp"
#include "collect/health_watch.hpp"
#include "collect/sink.hpp"

namespace gpuscope::collect {

struct SamplerOptions {
  std::chrono::nanoseconds interval{std::chrono::milliseconds(100)};
  std::chrono::nanoseconds power_interval{0};  // 0: no separate power cadence
  // The slow health cadence (ECC, remapped rows, PCIe replays...); 0: no health at all. The
  // driver's fault events are polled, without waiting, at the main cadence on the same thread.
  std::chrono::nanoseconds health_interval{0};
  // How often the energy counter is read. The counter refreshes every 90-110 ms on an H200 and one
  // read costs 3-4 ms there, all of it spent spinning on the caller's CPU (docs/validation.md):
  // 3 % of a core per GPU at 100 ms. 0 (the default): at every main tick, and by the power
  // cadence every kPowerCounterInterval between them. Else at the first tick of either cadence
  // at or after each multiple of it from the start. Rows between carry no energy: the run's
  // energy stays the counter's, a phase's is interpolated in time between the readings around
  // its edges. A power tick that falls on a main tick takes the main read's counter.
  std::chrono::nanoseconds counter_interval{0};
};

// The power cadence's counter reads when SamplerOptions::counter_interval is 0: read at every 10
// ms power tick the counter bought no new value for 40 % of an H200's time.
inline constexpr std::chrono::nanoseconds kPowerCounterInterval = std::chrono::milliseconds(100);

// A slow reader of something beside the GPUs (the node's energy, app/profile/node_watch.hpp): run
// on the health thread (started for it when there is no health), never on the sampling one, every
// `interval` from the start, and once more when the sampler stops.
struct SlowTask {
  std::chrono::nanoseconds interval{std::chrono::seconds(1)};
  std::function<void()> run;
};

// Where the sampler's threads read the time and wait for their deadlines: the system's clocks
// by default; a test gives its own to drive time by hand and count ticks exactly.
class SamplerClock {
 public:
  virtual ~SamplerClock() = default;
  virtual std::int64_t mono_ns() = 0;  // CLOCK_MONOTONIC, ns
  virtual std::int64_t wall_ns() = 0;  // CLOCK_REALTIME, ns since the epoch
  // Returns once mono_ns() has reached `deadline_ns`, or soon after `running` turns false.
  virtual void sleep_until(std::int64_t deadline_ns, const std::atomic<bool>& running) = 0;
};

// The system's clocks (core/clock.hpp), waiting with clock_nanosleep in slices of 50 ms so that
// stop() is prompt even at slow cadences.
SamplerClock& system_sampler_clock();

struct SamplerStats {
  std::int64_t ticks = 0;  // main-cadence ticks completed (of the lane that took the most)
  std::int64_t rows = 0;   // device rows produced
  std::int64_t power_rows = 0;
  std::int64_t health_rows = 0;
  std::int64_t lanes = 0;  // sampling threads: one per physical GPU
  // Ticks skipped because the previous one ran late, summed over the lanes.
  std::int64_t deadlines_missed = 0;
  std::int64_t power_deadlines_missed = 0;  // the same for the power cadence
  std::int64_t failed_calls = 0;            // NVML calls that failed transiently
  std::int64_t lost_gpus = 0;
  std::vector<unsigned> lost_gpu_indices;  // indices of the GPUs that fell off the bus
};

class Sampler {
 public:
  Sampler(GpuReaders readers, SamplerOptions options, SampleSink& sink,
          std::vector<SlowTask> slow_tasks = {}, SamplerClock& clock = system_sampler_clock());
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Starts the sampling threads. The first sample is taken immediately.
  void start();
  // Takes a last sample, stops the threads and waits for them.
  void stop();

  SamplerStats stats() const;
  std::size_t device_count() const { return readers_.size(); }
  // What start() found the GPUs cannot report about their health (one line each).
  const std::vector<std::string>& health_notes() const { return health_notes_; }

 private:
  // One physical GPU's readers (the GPU's own, then its MIG devices') and their thread.
  struct Lane {
    std::vector<std::size_t> readers;  // indices into readers_
    unsigned gpu = 0;                  // the GPU's index, for its events
    std::thread thread;
    std::int64_t ticks = 0;
  };
  // What one pass over readers produced, added to the stats at once.
  struct Tally {
    std::int64_t rows = 0;
    std::int64_t failed = 0;
    std::vector<unsigned> lost;
  };

  void make_lanes();
  void lane_loop(Lane& lane);
  // The lane's main cadence at tick `tick_mono_ns`; keeps each reader's row in `rows`. The energy
  // counter is read when `counter`.
  void sample_lane(Lane& lane, std::int64_t tick_mono_ns, std::vector<SampleRow>& rows,
                   bool counter);
  // The lane's power cadence: from the rows of a main read at the same tick when `rows` is
  // given, else read (the energy counter too when `counter`).
  void power_lane(const Lane& lane, const std::vector<SampleRow>* rows, bool counter);
  void note_missed(const Lane& lane, std::int64_t missed, bool power);
  static std::optional<PowerRow> power_row_of(const SampleRow& sample, unsigned index);
  void health_loop();
  void read_health();
  void poll_health_events();
  void run_slow_tasks(bool all);
  // Reads reader k into `row`; false when nothing was read (lost, or no metric answered).
  bool sample_reader(std::size_t k, std::int64_t tick_mono_ns, SampleRow& row, Tally& tally,
                     bool counter);
  void add_tally(const Tally& tally);  // stats_mutex_ held
  void emit(Event event);
  void check_clock_events(std::size_t k, const SampleRow& row);
  void report_lost(std::size_t k);

  GpuReaders readers_;
  SamplerOptions options_;
  SampleSink& sink_;
  SamplerClock& clock_;
  std::vector<std::optional<std::uint64_t>> last_reasons_;
  std::vector<bool> reported_lost_;
  std::atomic<bool> running_{false};
  std::vector<Lane> lanes_;
  std::thread health_thread_;
  std::optional<HealthWatch> health_;
  std::vector<std::string> health_notes_;
  std::vector<SlowTask> slow_tasks_;
  std::vector<std::int64_t> slow_next_ns_;  // when each slow task runs next
  mutable std::mutex stats_mutex_;
  SamplerStats stats_;
  std::int64_t start_mono_ns_ = 0;
};

// Words for a clock-event (throttle) reason bitmask: "SW power cap, HW thermal slowdown".
std::string describe_clock_events(std::uint64_t reasons);

}  // namespace gpuscope::collect
