// WindowMeter on rows made here: the figures of a window are computed by hand from the rows'
// values and times, and must come out exactly (to rounding).
#include "capi/window_meter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "core/clock.hpp"

namespace gpuscope::capi {
namespace {

constexpr std::int64_t kMs = 1'000'000;

SampleRow row(unsigned gpu, std::int64_t t_ms, double power_w, std::optional<double> counter_mj,
              double util_pct = 50, std::optional<double> sm_pct = std::nullopt) {
  SampleRow r;
  r.device_index = gpu;
  r.mono_ns = t_ms * kMs;
  r.set(Metric::PowerW, power_w);
  if (counter_mj) r.set(Metric::EnergyMj, *counter_mj);
  r.set(Metric::GpuUtilPct, util_pct);
  if (sm_pct) r.set(Metric::SmActivePct, *sm_pct);
  return r;
}

// GPU 0 at `watts` from 0 ms, its counter exactly what that power gives, every 100 ms to `to_ms`.
void feed_steady(WindowMeter& meter, double watts, std::int64_t from_ms, std::int64_t to_ms,
                 double util = 50) {
  for (std::int64_t t = from_ms; t <= to_ms; t += 100) {
    meter.on_sample(row(0, t, watts, 1e9 + watts * static_cast<double>(t), util));
  }
}

WindowFigures end_at(WindowMeter& meter, std::uint64_t id, std::int64_t t_ms) {
  WindowFigures out;
  EndFailure failure{};
  EXPECT_TRUE(meter.end(id, t_ms * kMs, out, failure));
  return out;
}

TEST(WindowMeter, EdgesBetweenSamplesAreInterpolatedAndTheEndExtrapolated) {
  WindowMeter meter({{0, "GPU-a"}});
  feed_steady(meter, 200, 0, 300);
  const auto id = meter.begin("train", 350 * kMs);  // between the samples at 300 and 400 ms
  feed_steady(meter, 200, 400, 1500, 80);
  const WindowFigures w = end_at(meter, id, 1550);  // 50 ms after the last sample
  ASSERT_EQ(w.gpus.size(), 1U);
  const GpuFigures& g = w.gpus[0];
  EXPECT_DOUBLE_EQ(w.seconds, 1.2);
  EXPECT_NEAR(g.energy_j, 200 * 1.2, 1e-9);
  EXPECT_NEAR(w.energy_j, 240, 1e-9);
  EXPECT_EQ(g.energy_source, EnergySource::Counter);
  EXPECT_NEAR(g.mean_power_w, 200, 1e-9);
  EXPECT_NEAR(g.gpu_util_pct, 80, 1e-9);  // the samples after 300 ms say 80 %
  EXPECT_TRUE(std::isnan(g.sm_active_pct));
  EXPECT_EQ(g.samples, 12U);  // 400, 500, ..., 1500 ms
  EXPECT_FALSE(g.estimated);
  EXPECT_EQ(g.uuid, "GPU-a");
  EXPECT_EQ(meter.open_windows(), 0U);
}

TEST(WindowMeter, TheCounterNotPowerGivesTheEnergy) {
  // Power says 100 W, the counter rises at 300 W: the counter is believed between readings.
  WindowMeter meter({{0, "GPU-a"}});
  meter.on_sample(row(0, 0, 100, 5000.0));
  const auto id = meter.begin("w", 0);
  for (std::int64_t t = 100; t <= 1000; t += 100) {
    meter.on_sample(row(0, t, 100, 5000.0 + 300.0 * static_cast<double>(t)));
  }
  const WindowFigures w = end_at(meter, id, 1000);
  EXPECT_NEAR(w.gpus[0].energy_j, 300.0, 1e-9);
  EXPECT_EQ(w.gpus[0].energy_source, EnergySource::Counter);
}

TEST(WindowMeter, ACounterReadLessOftenKeepsItsDifferencesAndFillsWithPower) {
  // The counter every 500 ms (profile's --energy-counter-ms), power every 100 ms at 200 W; the
  // counter says 250 W: between readings power fills in, each reading puts the counter back.
  WindowMeter meter({{0, "GPU-a"}});
  const auto id = meter.begin("w", 0);
  for (std::int64_t t = 0; t <= 1000; t += 100) {
    const bool read = t % 500 == 0;
    meter.on_sample(row(
        0, t, 200, read ? std::optional<double>(250.0 * static_cast<double>(t)) : std::nullopt));
  }
  EXPECT_NEAR(end_at(meter, id, 1000).gpus[0].energy_j, 250.0, 1e-9);
  const auto id2 = meter.begin("w", 1000 * kMs);
  meter.on_sample(row(0, 1100, 200, std::nullopt));
  EXPECT_NEAR(end_at(meter, id2, 1100).gpus[0].energy_j, 20.0, 1e-9);  // power alone since
}

TEST(WindowMeter, WithoutACounterPowerIsIntegrated) {
  WindowMeter meter({{0, "GPU-a"}});
  meter.on_sample(row(0, 0, 100, std::nullopt));
  const auto id = meter.begin("w", 0);
  meter.on_sample(row(0, 100, 300, std::nullopt));  // trapezoid: 200 W × 0.1 s
  meter.on_sample(row(0, 200, 300, std::nullopt));  // 30 J
  const WindowFigures w = end_at(meter, id, 300);   // 300 W × 0.1 s after the last sample
  EXPECT_NEAR(w.gpus[0].energy_j, 20 + 30 + 30, 1e-9);
  EXPECT_EQ(w.gpus[0].energy_source, EnergySource::IntegratedPower);
  EXPECT_NEAR(w.gpus[0].peak_power_w, 300, 1e-12);
}

TEST(WindowMeter, AWindowWithNoSampleInsideIsEstimatedFromTheReadingsBefore) {
  WindowMeter meter({{0, "GPU-a"}});
  feed_steady(meter, 400, 0, 100);
  const auto id = meter.begin("short", 120 * kMs);
  const WindowFigures w = end_at(meter, id, 150);
  EXPECT_TRUE(w.gpus[0].estimated);
  EXPECT_EQ(w.gpus[0].samples, 0U);
  EXPECT_NEAR(w.gpus[0].energy_j, 400 * 0.03, 1e-9);
  EXPECT_TRUE(std::isnan(w.gpus[0].peak_power_w));
}

TEST(WindowMeter, PeakPowerIsTheHighestReadingInsideTheWindowInstantPowerIncluded) {
  WindowMeter meter({{0, "GPU-a"}});
  meter.on_sample(row(0, 0, 500, 0.0));  // before the window: not its peak
  const auto id = meter.begin("w", 50 * kMs);
  SampleRow r = row(0, 100, 200, 10000.0);
  r.set(Metric::PowerInstantW, 350);
  meter.on_sample(r);
  meter.on_sample(row(0, 200, 300, 40000.0));
  EXPECT_NEAR(end_at(meter, id, 200).gpus[0].peak_power_w, 350, 1e-12);
}

TEST(WindowMeter, NestedAndOverlappingWindowsAreEachTheirOwn) {
  WindowMeter meter({{0, "GPU-a"}, {1, "GPU-b"}});
  const auto outer = meter.begin("epoch", 0);
  WindowFigures step;
  for (std::int64_t t = 0; t <= 2000; t += 100) {
    const double ft = static_cast<double>(t);
    meter.on_sample(row(0, t, 100, 100.0 * ft));
    meter.on_sample(row(1, t, 300, 300.0 * ft, 10, 7));
    if (t == 500) (void)meter.begin("step", 500 * kMs);
    if (t == 1000) {
      EXPECT_EQ(meter.open_windows(), 2U);
    }
    if (t == 1500) step = end_at(meter, 2, 1500);  // ends before the outer one
  }
  EXPECT_NEAR(step.gpus[0].energy_j, 100.0, 1e-9);
  EXPECT_NEAR(step.gpus[1].energy_j, 300.0, 1e-9);
  EXPECT_NEAR(step.energy_j, 400.0, 1e-9);
  EXPECT_NEAR(step.gpus[1].sm_active_pct, 7, 1e-9);
  const WindowFigures epoch = end_at(meter, outer, 2000);
  EXPECT_NEAR(epoch.energy_j, 800.0, 1e-9);
  EXPECT_EQ(step.name, "step");
  EXPECT_EQ(epoch.name, "epoch");
}

TEST(WindowMeter, EndingTwiceOrAnUnknownWindowFailsAndSaysWhich) {
  WindowMeter meter({{0, "GPU-a"}});
  const auto id = meter.begin("w", 0);
  WindowFigures out;
  EndFailure failure{};
  ASSERT_TRUE(meter.end(id, kMs, out, failure));
  EXPECT_FALSE(meter.end(id, 2 * kMs, out, failure));
  EXPECT_EQ(failure, EndFailure::AlreadyEnded);
  EXPECT_FALSE(meter.end(99, 2 * kMs, out, failure));
  EXPECT_EQ(failure, EndFailure::UnknownWindow);
  EXPECT_FALSE(meter.end(0, 2 * kMs, out, failure));
  EXPECT_EQ(failure, EndFailure::UnknownWindow);
}

TEST(WindowMeter, ALostGpuHasNoFiguresAndMakesTheSumUnknown) {
  WindowMeter meter({{0, "GPU-a"}, {1, "GPU-b"}});
  const auto id = meter.begin("w", 0);
  meter.on_sample(row(0, 0, 100, 0.0));
  meter.on_sample(row(1, 0, 100, 0.0));
  meter.on_event({0, 50 * kMs, 1, EventKind::GpuLost, "GPU 1 fell off the bus"});
  meter.on_sample(row(0, 100, 100, 10000.0));
  const WindowFigures w = end_at(meter, id, 100);
  EXPECT_TRUE(w.gpus[1].lost);
  EXPECT_TRUE(std::isnan(w.gpus[1].energy_j));
  EXPECT_TRUE(std::isnan(w.energy_j));
  EXPECT_NEAR(w.gpus[0].energy_j, 10.0, 1e-9);
}

TEST(WindowMeter, ACounterThatGoesBackKeepsWhatPowerGave) {
  WindowMeter meter({{0, "GPU-a"}});
  const auto id = meter.begin("w", 0);
  meter.on_sample(row(0, 0, 100, 50000.0));
  meter.on_sample(row(0, 100, 100, 60000.0));  // +10 J
  meter.on_sample(row(0, 200, 100, 10.0));     // a driver reload: 10 J from power
  meter.on_sample(row(0, 300, 100, 10010.0));  // +10 J
  EXPECT_NEAR(end_at(meter, id, 300).gpus[0].energy_j, 30.0, 1e-9);
}

TEST(WindowMeter, ASettledEndWaitsForTheNextSampleAndInterpolatesThere) {
  // 200 W to 1,000 ms, then the counter rises at 600 W: a window from 450 to 1,050 ms ends half
  // way into the 600 W interval. Extrapolated its last 50 ms would be 200 W's; settled, the
  // sample at 1,100 ms gives 600 W × 50 ms, and it is not counted inside the window.
  WindowMeter meter({{0, "GPU-a"}}, std::chrono::seconds(10));
  feed_steady(meter, 200, 0, 400);
  const auto id = meter.begin("w", 450 * kMs);
  feed_steady(meter, 200, 500, 1000);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    SampleRow r = row(0, 1100, 600, 1e9 + 200.0 * 1000 + 600.0 * 100);
    r.set(Metric::PowerInstantW, 900);
    meter.on_sample(r);
  });
  WindowFigures out;
  EndFailure failure{};
  ASSERT_TRUE(meter.end(id, 1050 * kMs, out, failure, true));
  later.join();
  EXPECT_NEAR(out.gpus[0].energy_j, 200 * 0.55 + 600 * 0.05, 1e-9);
  EXPECT_EQ(out.gpus[0].samples, 6U);                 // 500 ... 1,000 ms
  EXPECT_NEAR(out.gpus[0].peak_power_w, 200, 1e-12);  // not the 900 W after the end
}

TEST(WindowMeter, ASettledEndWithNoSampleComingIsExtrapolatedAfterTheTimeout) {
  WindowMeter meter({{0, "GPU-a"}}, std::chrono::milliseconds(30));
  feed_steady(meter, 200, 0, 400);
  const auto id = meter.begin("w", 450 * kMs);
  feed_steady(meter, 200, 500, 1000);
  WindowFigures out;
  EndFailure failure{};
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(meter.end(id, 1050 * kMs, out, failure, true));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(30));
  EXPECT_NEAR(out.gpus[0].energy_j, 200 * 0.6, 1e-9);
  EXPECT_EQ(meter.open_windows(), 0U);
}

TEST(WindowMeter, TheMonitorsTimeIsReadUnderTheLock) {
  // kNow: the clock is read once the meter's lock is held, so no sample processed before the
  // window began can be from after its begin.
  WindowMeter meter({{0, "GPU-a"}});
  const std::int64_t before = mono_now_ns();
  std::int64_t at = 0;
  const auto id = meter.begin("w", WindowMeter::kNow, &at);
  EXPECT_GE(at, before);
  EXPECT_LE(at, mono_now_ns());
  WindowFigures out;
  EndFailure failure{};
  ASSERT_TRUE(meter.end(id, WindowMeter::kNow, out, failure));
  EXPECT_EQ(out.begin_ns, at);
  EXPECT_GE(out.end_ns, at);
  EXPECT_LE(out.end_ns, mono_now_ns());
}

TEST(WindowMeter, OpenWindowsAreBoundedAndEndingOneMakesRoom) {
  WindowMeter meter({{0, "GPU-a"}});
  for (std::size_t k = 0; k < WindowMeter::kMaxOpen; ++k) ASSERT_NE(meter.begin("leak", 0), 0U);
  EXPECT_EQ(meter.begin("one too many", 0), 0U);
  WindowFigures out;
  EndFailure failure{};
  ASSERT_TRUE(meter.end(1, kMs, out, failure));
  EXPECT_NE(meter.begin("room again", 0), 0U);
  EXPECT_EQ(meter.open_windows(), WindowMeter::kMaxOpen);
}

}  // namespace
}  // namespace gpuscope::capi
