// The sampling loop against the simulated driver: what it records, what it leaves absent, and
// the events it raises. Time is a hand-driven clock, so the counts are exact and no assertion
// depends on how long anything took.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "collect/device_reader.hpp"
#include "collect/sampler.hpp"
#include "core/clock.hpp"
#include "nvml/session.hpp"
#include "recording_sink.hpp"
#include "sim_env.hpp"

namespace gpuscope::collect {
namespace {

using testing::RecordingSink;
using testing::SimEnvironment;

constexpr std::int64_t kMs = 1'000'000;
// Far from 0, which the GPM reader takes for "no sample yet".
constexpr std::int64_t kStart = 1'000'000 * kMs;
constexpr std::int64_t kWallOffset = 1'700'000'000'000 * kMs;

// A clock the test moves: the sampler's threads wait in sleep_until until the test advances the
// time past their deadline, and advance_to returns once each of them has done its work and waits
// for a later deadline again.
class ManualClock final : public SamplerClock {
 public:
  std::int64_t mono_ns() override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  std::int64_t wall_ns() override { return kWallOffset + mono_ns(); }
  void sleep_until(std::int64_t deadline_ns, const std::atomic<bool>& running) override {
    std::unique_lock lock(mutex_);
    const auto waiting = waiting_.insert(deadline_ns);
    settled_.notify_all();
    // Polled, so that stop() (which turns `running` false without a word to the clock) is seen.
    while (now_ < deadline_ns && running.load()) {
      time_moved_.wait_for(lock, std::chrono::milliseconds(1));
    }
    waiting_.erase(waiting);
  }

  // Moves the time to `to_ns` without waiting for anything.
  void move_to(std::int64_t to_ns) {
    std::lock_guard lock(mutex_);
    now_ = to_ns;
    time_moved_.notify_all();
  }

  // Moves the time to `to_ns` and waits until `threads` sampler threads wait for a deadline after
  // it: every tick due by then has been taken. False if they do not within a minute (a hang).
  bool advance_to(std::int64_t to_ns, std::size_t threads) {
    std::unique_lock lock(mutex_);
    now_ = to_ns;
    time_moved_.notify_all();
    return settled_.wait_for(lock, std::chrono::minutes(1), [&] {
      return static_cast<std::size_t>(std::count_if(waiting_.begin(), waiting_.end(),
                                                    [&](std::int64_t d) { return d > now_; })) ==
             threads;
    });
  }

 private:
  std::mutex mutex_;
  std::condition_variable time_moved_;
  std::condition_variable settled_;
  std::multiset<std::int64_t> waiting_;  // the deadlines the sampler's threads wait for
  std::int64_t now_ = kStart;
};

struct SampledRun {
  RecordingSink sink;
  std::vector<std::string> notes;
  SamplerStats stats;
};

// Samples `scenario` with `options` on a ManualClock: `steps` steps of `step_ms` after the start,
// then half a step or half an interval more (whichever is shorter: no tick falls in it), then
// stop() (its last sample), with `threads` sampler threads (0: one per GPU, the sampler's lanes).
// `after_step` is called after each step; returning false ends the steps early.
void sample_for(const std::string& scenario, int steps, std::int64_t step_ms, SampledRun& run,
                SamplerOptions options = {std::chrono::milliseconds(50), {}},
                std::size_t threads = 0,
                const std::function<bool(const SampledRun&)>& after_step = {}) {
  SimEnvironment env(scenario);
  auto library = nvml::Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
  nvml::Session session(library);
  GpuReaders readers;
  for (unsigned i = 0; i < session.device_count(); ++i) {
    readers.push_back(std::make_unique<DeviceReader>(session.device(i), run.notes));
  }
  if (threads == 0) threads = readers.size();
  ManualClock clock;
  Sampler sampler(std::move(readers), options, run.sink, {}, clock);
  sampler.start();
  ASSERT_TRUE(clock.advance_to(kStart, threads));
  for (int k = 1; k <= steps; ++k) {
    ASSERT_TRUE(clock.advance_to(kStart + k * step_ms * kMs, threads));
    if (after_step && !after_step(run)) break;
  }
  const std::int64_t nudge = std::min<std::int64_t>(step_ms * kMs, options.interval.count()) / 2;
  ASSERT_TRUE(clock.advance_to(clock.mono_ns() + nudge, threads));
  sampler.stop();
  run.stats = sampler.stats();
}

std::size_t rows_of(const SampledRun& run, unsigned device) {
  std::size_t n = 0;
  for (const auto& r : run.sink.samples) n += r.device_index == device ? 1 : 0;
  return n;
}

TEST(Sampler, SamplesEveryGpuOncePerTickWithIncreasingTimestamps) {
  SampledRun run;
  // Ticks at 0, 50, ..., 500 ms, and the last sample of stop() at 525 ms.
  sample_for(SimEnvironment::shipped("h100x4-straggler"), 10, 50, run,
             {std::chrono::milliseconds(50), {}}, 4);
  for (unsigned d = 0; d < 4; ++d) EXPECT_EQ(rows_of(run, d), 12U) << "GPU " << d;
  std::map<unsigned, std::int64_t> last;
  for (const auto& r : run.sink.samples) {
    EXPECT_GT(r.mono_ns, last[r.device_index]);
    EXPECT_EQ(r.wall_ns, kWallOffset + r.mono_ns);
    last[r.device_index] = r.mono_ns;
    EXPECT_TRUE(r.get(Metric::PowerW).has_value());
    EXPECT_TRUE(r.get(Metric::EnergyMj).has_value());
    EXPECT_TRUE(r.get(Metric::TemperatureC).has_value());
  }
  EXPECT_EQ(last[0], kStart + 525 * kMs);
  EXPECT_EQ(run.stats.ticks, 12);
  EXPECT_EQ(run.stats.lanes, 4);  // a thread per GPU
  EXPECT_EQ(run.stats.rows, 48);
  EXPECT_EQ(run.stats.deadlines_missed, 0);
  EXPECT_EQ(run.stats.rows, static_cast<std::int64_t>(run.sink.samples.size()));
}

TEST(Sampler, ALateTickSkipsToTheGridAndSaysSo) {
  SampledRun run;
  // One step of 250 ms: the tick due at 50 ms is taken at 250 ms, those of 100..250 ms skipped.
  sample_for(SimEnvironment::shipped("h100"), 1, 250, run);
  EXPECT_EQ(run.stats.deadlines_missed, 4);
  EXPECT_EQ(run.stats.ticks, 3);  // 0 ms, 250 ms, stop() at 275 ms
  std::vector<Event> gaps;
  for (const auto& e : run.sink.events) {
    if (e.kind == EventKind::Gap) gaps.push_back(e);
  }
  ASSERT_EQ(gaps.size(), 1U);
  EXPECT_NE(gaps[0].detail.find("fell 4 ticks behind"), std::string::npos) << gaps[0].detail;
}

TEST(Sampler, GpmMetricsOnHopperNeedTwoSamples100msApart) {
  SampledRun run;
  // Ticks every 50 ms from 0 to 550 ms, stop() at 575 ms: GPM at 100, 200, ..., 500 ms.
  sample_for(SimEnvironment::shipped("h100"), 11, 50, run);
  std::vector<std::int64_t> with_gpm;
  for (const auto& r : run.sink.samples) {
    if (auto sm = r.get(Metric::SmActivePct)) {
      with_gpm.push_back((r.mono_ns - kStart) / kMs);
      EXPECT_GE(*sm, 0.0);
      EXPECT_LE(*sm, 100.0);
      EXPECT_TRUE(r.get(Metric::TensorActivePct).has_value());
      EXPECT_TRUE(r.get(Metric::DramActivePct).has_value());
    }
  }
  EXPECT_EQ(run.sink.samples.size(), 13U);
  EXPECT_EQ(with_gpm, (std::vector<std::int64_t>{100, 200, 300, 400, 500}));
}

TEST(Sampler, MissingIsAbsentNotZero) {
  SampledRun run;
  sample_for(SimEnvironment::shipped("a100-nogpm"), 6, 50, run);
  ASSERT_FALSE(run.sink.samples.empty());
  for (const auto& r : run.sink.samples) {
    EXPECT_FALSE(r.get(Metric::SmActivePct).has_value());
    EXPECT_FALSE(r.get(Metric::TensorActivePct).has_value());
    EXPECT_TRUE(r.get(Metric::GpuUtilPct).has_value());
  }
  bool said_no_gpm = false;
  for (const auto& note : run.notes)
    said_no_gpm |= note.find("does not support GPM") != std::string::npos;
  EXPECT_TRUE(said_no_gpm);
}

TEST(Sampler, UnsupportedCallsAreProbedOnceAndSkipped) {
  SampledRun run;
  sample_for(SimEnvironment::fixture("not-supported"), 6, 50, run);
  ASSERT_FALSE(run.sink.samples.empty());
  for (const auto& r : run.sink.samples) EXPECT_FALSE(r.get(Metric::EnergyMj).has_value());
  EXPECT_EQ(run.stats.failed_calls, 0);
}

// The power rows' times, in ms from the start, of those that carry the energy counter.
std::vector<std::int64_t> counter_times_ms(const SampledRun& run) {
  std::vector<std::int64_t> times;
  for (const auto& p : run.sink.power) {
    if (p.energy_mj) times.push_back((p.mono_ns - kStart) / kMs);
  }
  return times;
}

TEST(Sampler, FastPowerCadenceReadsPowerOnItsOwnGrid) {
  SampledRun run;
  // Steps of 10 ms to 500 ms: power at 0, 10, ..., 500 ms and stop()'s at 505 ms (52 rows),
  // samples at 0, 100, ..., 500 ms and stop()'s (7 rows), both cadences on the GPU's one thread.
  sample_for(SimEnvironment::shipped("h100"), 50, 10, run,
             {std::chrono::milliseconds(100), std::chrono::milliseconds(10)}, 1);
  EXPECT_EQ(run.sink.power.size(), 52U);
  EXPECT_EQ(run.stats.power_rows, 52);
  EXPECT_EQ(run.stats.power_deadlines_missed, 0);
  EXPECT_EQ(run.sink.samples.size(), 7U);
  for (const auto& p : run.sink.power) EXPECT_TRUE(p.power_w.has_value());
  // The counter (3.8 ms a read on an H200) once per 100 ms: the power row of each main tick takes
  // the main read's, with its time and value; the rows between carry power only; stop()'s last
  // sample ends the power rows with a reading.
  EXPECT_EQ(counter_times_ms(run), (std::vector<std::int64_t>{0, 100, 200, 300, 400, 500, 505}));
  std::map<std::int64_t, double> sampled;
  for (const auto& s : run.sink.samples) sampled[s.mono_ns] = *s.get(Metric::EnergyMj);
  double last = 0;
  for (const auto& p : run.sink.power) {
    if (!p.energy_mj) continue;
    ASSERT_TRUE(sampled.count(p.mono_ns)) << p.mono_ns;
    EXPECT_EQ(*p.energy_mj, sampled[p.mono_ns]);
    EXPECT_GE(*p.energy_mj, last);  // the counter never runs backwards
    last = *p.energy_mj;
  }
}

TEST(Sampler, ThePowerCadenceReadsTheCounterOnItsOwnGridBetweenMainTicks) {
  SampledRun run;
  // Main ticks at 0, 250 and 500 ms; power every 50 ms; the counter every 100 ms: from the main
  // reads at 0, 250 and 500 ms, read by the power cadence 100 ms after the last reading.
  sample_for(SimEnvironment::shipped("h100"), 10, 50, run,
             {std::chrono::milliseconds(250), std::chrono::milliseconds(50)}, 1);
  EXPECT_EQ(run.sink.power.size(), 12U);  // 0, 50, ..., 500 ms and stop()'s at 525 ms
  EXPECT_EQ(counter_times_ms(run),
            (std::vector<std::int64_t>{0, 100, 200, 250, 350, 450, 500, 525}));
}

// The samples' times, in ms from the start, of those that carry the energy counter.
std::vector<std::int64_t> sample_counter_times_ms(const SampledRun& run) {
  std::vector<std::int64_t> times;
  for (const auto& r : run.sink.samples) {
    if (r.get(Metric::EnergyMj)) times.push_back((r.mono_ns - kStart) / kMs);
  }
  return times;
}

TEST(Sampler, ACounterIntervalReadsTheCounterOnItsGridOnly) {
  SampledRun run;
  // Samples every 100 ms to 1,000 ms and stop()'s at 1,050 ms; power every 50 ms to 1,050 ms and
  // stop()'s; the counter
  // every 300 ms: read by the main reads at 0, 300, 600 and 900 ms (the power rows there take
  // them) and at the stop, nowhere else; every other row has power and no counter.
  SamplerOptions options{std::chrono::milliseconds(100), std::chrono::milliseconds(50)};
  options.counter_interval = std::chrono::milliseconds(300);
  sample_for(SimEnvironment::shipped("h100"), 10, 100, run, options, 1);
  EXPECT_EQ(sample_counter_times_ms(run), (std::vector<std::int64_t>{0, 300, 600, 900, 1050}));
  EXPECT_EQ(counter_times_ms(run), (std::vector<std::int64_t>{0, 300, 600, 900, 1050}));
  EXPECT_EQ(run.sink.samples.size(), 12U);
  EXPECT_EQ(run.sink.power.size(), 23U);
  for (const auto& r : run.sink.samples) EXPECT_TRUE(r.get(Metric::PowerW)) << r.mono_ns;
  for (const auto& p : run.sink.power) EXPECT_TRUE(p.power_w) << p.mono_ns;
}

TEST(Sampler, ACounterIntervalShorterThanTheSamplesIsKeptByThePowerCadence) {
  SampledRun run;
  // Samples every 500 ms, power every 100 ms, the counter every 200 ms: the main read at 500 ms
  // falls between two counter readings and takes none; the power cadence reads it at 200, 400,
  // 600 and 800 ms, the main reads at 0 and 1,000 ms, and stop() at 1,050 ms.
  SamplerOptions options{std::chrono::milliseconds(500), std::chrono::milliseconds(100)};
  options.counter_interval = std::chrono::milliseconds(200);
  sample_for(SimEnvironment::shipped("h100"), 10, 100, run, options, 1);
  EXPECT_EQ(sample_counter_times_ms(run), (std::vector<std::int64_t>{0, 1000, 1050}));
  EXPECT_EQ(counter_times_ms(run), (std::vector<std::int64_t>{0, 200, 400, 600, 800, 1000, 1050}));
}

TEST(Sampler, ASlowGpuDelaysNoOtherGpu) {
  // GPU 0's energy counter answers in 1 s, GPU 1's at once. Each GPU has its own thread: GPU 1's
  // next tick is taken while GPU 0 is still in its slow call.
  SimEnvironment env(SimEnvironment::fixture("slow-energy-gpu0"));
  auto library = nvml::Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
  nvml::Session session(library);
  SampledRun run;
  GpuReaders readers;
  for (unsigned i = 0; i < 2; ++i) {
    readers.push_back(std::make_unique<DeviceReader>(session.device(i), run.notes));
  }
  ManualClock clock;
  Sampler sampler(std::move(readers), {std::chrono::milliseconds(50), {}}, run.sink, {}, clock);
  sampler.start();
  ASSERT_TRUE(clock.advance_to(kStart, 2));  // both first ticks taken (GPU 0's in 1 s)
  clock.move_to(kStart + 50 * kMs);
  const auto rows = [&](unsigned gpu) { return run.sink.samples_of(gpu); };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (rows(1) < 2 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(rows(1), 2U) << "GPU 1's tick waited for GPU 0's slow call";
  EXPECT_EQ(rows(0), 1U);
  ASSERT_TRUE(clock.advance_to(kStart + 75 * kMs, 2));
  sampler.stop();
  EXPECT_EQ(rows(0), 3U);  // 0 and 50 ms, and stop()'s
  EXPECT_EQ(sampler.stats().deadlines_missed, 0);
}

TEST(Sampler, LostGpuRaisesOneEventAndStopsItsRows) {
  // GPU 1 is lost 8 scenario seconds in, which the simulator counts on its own real clock: 200
  // ms at this scale. Ticks go on until the sampler has said so (or a minute has passed), then
  // three more and stop()'s; the verdict is about what was recorded, never about when. The
  // timeline starts now, whatever the tests before took.
  setenv("GPUSCOPE_SIM_TIME_SCALE", "40", 1);
  setenv("GPUSCOPE_SIM_EPOCH_NS", std::to_string(wall_now_ns()).c_str(), 1);
  SampledRun run;
  int after_loss = -1;
  const auto end = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  sample_for(SimEnvironment::shipped("h100x2-gpu-lost"), 1'000'000, 50, run,
             {std::chrono::milliseconds(50), {}}, 2, [&](const SampledRun& r) {
               if (after_loss < 0) {
                 bool lost = false;
                 for (const auto& e : r.sink.events) lost |= e.kind == EventKind::GpuLost;
                 if (lost) after_loss = 0;
               }
               if (after_loss < 0) {
                 // Lets the simulator's clock run between ticks.
                 std::this_thread::sleep_for(std::chrono::milliseconds(1));
                 return std::chrono::steady_clock::now() < end;
               }
               return ++after_loss <= 3;
             });
  unsetenv("GPUSCOPE_SIM_TIME_SCALE");
  unsetenv("GPUSCOPE_SIM_EPOCH_NS");
  std::vector<Event> lost;
  for (const auto& e : run.sink.events) {
    if (e.kind == EventKind::GpuLost) lost.push_back(e);
  }
  ASSERT_EQ(lost.size(), 1U);
  EXPECT_EQ(lost[0].device_index, 1U);
  for (const auto& r : run.sink.samples) {
    if (r.device_index == 1) {
      EXPECT_LE(r.mono_ns, lost[0].mono_ns);
    }
  }
  // GPU 0 on every tick; GPU 1 on none after its loss, of which there were at least four.
  EXPECT_EQ(static_cast<std::int64_t>(rows_of(run, 0)), run.stats.ticks);
  EXPECT_LE(rows_of(run, 1) + 4, rows_of(run, 0));
  EXPECT_EQ(run.stats.lost_gpus, 1);
}

TEST(ClockEvents, DescribesEveryBit) {
  EXPECT_EQ(describe_clock_events(0), "none");
  EXPECT_EQ(
      describe_clock_events(nvml::kClocksEventSwPowerCap | nvml::kClocksEventHwThermalSlowdown),
      "SW power cap, HW thermal slowdown");
}

}  // namespace
}  // namespace gpuscope::collect
