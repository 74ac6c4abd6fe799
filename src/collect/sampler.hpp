// The sampling loop: reads every selected GPU at a fixed cadence on absolute deadlines (no
// drift), and power and energy at an optional faster cadence, on their own threads, handing rows
// to a SampleSink. It never throws into its caller and never stops the job: failures become
// events and counters.
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
};

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
  std::int64_t ticks = 0;  // main-cadence ticks completed
  std::int64_t rows = 0;   // device rows produced
  std::int64_t power_rows = 0;
  std::int64_t health_rows = 0;
  std::int64_t deadlines_missed = 0;  // ticks skipped because the previous one ran late
  std::int64_t failed_calls = 0;      // NVML calls that failed transiently
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
  void main_loop();
  void power_loop();
  void health_loop();
  void read_health();
  void poll_health_events();
  void run_slow_tasks(bool all);
  void sample_all(std::int64_t mono_ns);
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
  std::thread main_thread_;
  std::thread power_thread_;
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
