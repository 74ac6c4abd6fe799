// The sampling loop against the simulated driver: what it records, what it leaves absent, and
// the events it raises. Assertions are about content, never about how long anything took.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "collect/device_reader.hpp"
#include "collect/sampler.hpp"
#include "nvml/session.hpp"
#include "recording_sink.hpp"
#include "sim_env.hpp"

namespace gpuscope::collect {
namespace {

using testing::SimEnvironment;

using testing::RecordingSink;

struct SampledRun {
  RecordingSink sink;
  std::vector<std::string> notes;
  SamplerStats stats;
};

void sample_for(const std::string& scenario, std::chrono::milliseconds duration, SampledRun& run,
                SamplerOptions options = {std::chrono::milliseconds(50), {}}) {
  SimEnvironment env(scenario);
  auto library = nvml::Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
  nvml::Session session(library);
  GpuReaders readers;
  for (unsigned i = 0; i < session.device_count(); ++i) {
    readers.push_back(std::make_unique<DeviceReader>(session.device(i), run.notes));
  }
  Sampler sampler(std::move(readers), options, run.sink);
  sampler.start();
  std::this_thread::sleep_for(duration);
  sampler.stop();
  run.stats = sampler.stats();
}

std::size_t rows_of(const SampledRun& run, unsigned device) {
  std::size_t n = 0;
  for (const auto& r : run.sink.samples) n += r.device_index == device ? 1 : 0;
  return n;
}

TEST(Sampler, SamplesEveryGpuWithIncreasingTimestamps) {
  SampledRun run;
  sample_for(SimEnvironment::shipped("h100x4-straggler"), std::chrono::milliseconds(500), run);
  for (unsigned d = 0; d < 4; ++d) EXPECT_GE(rows_of(run, d), 3U) << "GPU " << d;
  std::map<unsigned, std::int64_t> last;
  for (const auto& r : run.sink.samples) {
    EXPECT_GT(r.mono_ns, last[r.device_index]);
    EXPECT_GT(r.wall_ns, 0);
    last[r.device_index] = r.mono_ns;
    EXPECT_TRUE(r.get(Metric::PowerW).has_value());
    EXPECT_TRUE(r.get(Metric::EnergyMj).has_value());
    EXPECT_TRUE(r.get(Metric::TemperatureC).has_value());
  }
  EXPECT_EQ(run.stats.rows, static_cast<std::int64_t>(run.sink.samples.size()));
}

TEST(Sampler, GpmMetricsOnHopperNeedTwoSamples100msApart) {
  SampledRun run;
  sample_for(SimEnvironment::shipped("h100"), std::chrono::milliseconds(600), run);
  std::size_t with_gpm = 0;
  for (const auto& r : run.sink.samples) {
    if (auto sm = r.get(Metric::SmActivePct)) {
      ++with_gpm;
      EXPECT_GE(*sm, 0.0);
      EXPECT_LE(*sm, 100.0);
      EXPECT_TRUE(r.get(Metric::TensorActivePct).has_value());
      EXPECT_TRUE(r.get(Metric::DramActivePct).has_value());
    }
  }
  EXPECT_GE(with_gpm, 2U);
  // At 50 ms ticks, GPM windows are at least 100 ms: never more than every other row.
  EXPECT_LE(with_gpm, run.sink.samples.size() / 2 + 1);
}

TEST(Sampler, MissingIsAbsentNotZero) {
  SampledRun run;
  sample_for(SimEnvironment::shipped("a100-nogpm"), std::chrono::milliseconds(300), run);
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
  sample_for(SimEnvironment::fixture("not-supported"), std::chrono::milliseconds(300), run);
  ASSERT_FALSE(run.sink.samples.empty());
  for (const auto& r : run.sink.samples) EXPECT_FALSE(r.get(Metric::EnergyMj).has_value());
  EXPECT_EQ(run.stats.failed_calls, 0);
}

TEST(Sampler, FastPowerCadenceProducesMoreRowsThanTheMainOne) {
  SampledRun run;
  sample_for(SimEnvironment::shipped("h100"), std::chrono::milliseconds(500), run,
             {std::chrono::milliseconds(100), std::chrono::milliseconds(10)});
  EXPECT_GT(run.sink.power.size(), 2 * run.sink.samples.size());
  for (const auto& p : run.sink.power) {
    EXPECT_TRUE(p.power_w.has_value());
    EXPECT_TRUE(p.energy_mj.has_value());
  }
  // The energy counter never runs backwards.
  for (std::size_t k = 1; k < run.sink.power.size(); ++k) {
    EXPECT_GE(*run.sink.power[k].energy_mj, *run.sink.power[k - 1].energy_mj);
  }
}

TEST(Sampler, LostGpuRaisesOneEventAndStopsItsRows) {
  setenv("GPUSCOPE_SIM_TIME_SCALE", "40", 1);  // GPU 1 is lost 8 scenario seconds in: 200 ms
  SampledRun run;
  sample_for(SimEnvironment::shipped("h100x2-gpu-lost"), std::chrono::milliseconds(600), run);
  unsetenv("GPUSCOPE_SIM_TIME_SCALE");
  std::vector<Event> lost;
  for (const auto& e : run.sink.events) {
    if (e.kind == EventKind::GpuLost) lost.push_back(e);
  }
  ASSERT_EQ(lost.size(), 1U);
  EXPECT_EQ(lost[0].device_index, 1U);
  for (const auto& r : run.sink.samples) {
    if (r.device_index == 1) {
      EXPECT_LT(r.mono_ns, lost[0].mono_ns);
    }
  }
  EXPECT_GT(rows_of(run, 0), rows_of(run, 1));
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
