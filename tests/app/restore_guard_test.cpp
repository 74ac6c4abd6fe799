// The sweep's safety net against the simulated driver's own state: whichever way a sweep ends,
// the GPUs' power limits and clocks go back, and the restore record goes only when they did.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "app/gpu_settings.hpp"
#include "core/error.hpp"
#include "nvml/library.hpp"
#include "nvml/session.hpp"
#include "sweep/restore_record.hpp"
#include "unit/sim_env.hpp"

namespace gpuscope::app {
namespace {

namespace fs = std::filesystem;
using sweep::Knob;
using testing::SimEnvironment;

std::shared_ptr<const nvml::Library> sim() {
  return nvml::Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
}

// The power limit as a new session reads it: what the driver holds, not what we remember.
unsigned driver_power_limit_mw(unsigned index) {
  nvml::Session fresh(sim());
  return fresh.device(index).power_limit_mw().value();
}

// A sweep's start: the record of the GPUs as they are, written before anything changes.
struct SweepStart {
  explicit SweepStart(const nvml::Session& session, std::vector<unsigned> gpus,
                      Knob knob = Knob::PowerLimit)
      : indices(std::move(gpus)),
        limits(read_setting_limits(session, indices, knob)),
        path(fs::path(dir.path()) / "sweep.db.restore.json") {
    record.output = (fs::path(dir.path()) / "sweep.db").string();
    record.gpus = limits.now;
    sweep::write_restore_record(path, record);
  }
  std::vector<unsigned> indices;
  SettingLimits limits;
  testing::TempDir dir;
  fs::path path;
  sweep::RestoreRecord record;
};

TEST(RestoreGuard, RestoresOnSuccessAndRemovesTheRecord) {
  SimEnvironment env(SimEnvironment::shipped("h100x4-straggler"));
  nvml::Session session(sim());
  SweepStart start(session, {0, 2});
  const unsigned before = driver_power_limit_mw(0);
  ASSERT_GT(before, 400'000u);
  {
    RestoreGuard guard(session, start.record, start.path);
    apply_setting(session, start.indices, Knob::PowerLimit, 400);
    EXPECT_EQ(driver_power_limit_mw(0), 400'000u);
    EXPECT_EQ(driver_power_limit_mw(2), 400'000u);
    EXPECT_EQ(driver_power_limit_mw(1), before) << "a GPU outside the sweep was changed";
    EXPECT_TRUE(guard.restore());
    EXPECT_TRUE(guard.restored());
    EXPECT_TRUE(guard.restore()) << "a second call answers as the first";
  }
  EXPECT_EQ(driver_power_limit_mw(0), before);
  EXPECT_EQ(driver_power_limit_mw(2), before);
  EXPECT_FALSE(fs::exists(start.path));
}

TEST(RestoreGuard, RestoresWhenAnExceptionLeavesTheSweep) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  nvml::Session session(sim());
  SweepStart start(session, {0});
  const unsigned before = driver_power_limit_mw(0);
  try {
    RestoreGuard guard(session, start.record, start.path);
    apply_setting(session, start.indices, Knob::PowerLimit, 350);
    ASSERT_EQ(driver_power_limit_mw(0), 350'000u);
    throw std::runtime_error("a trial's run file could not be made");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(driver_power_limit_mw(0), before);
  EXPECT_FALSE(fs::exists(start.path));
}

TEST(RestoreGuard, RestoresWhenTheSweepStopsEarly) {
  // A failed trial or a signal ends the trial loop early; the sweep then restores before it
  // writes anything (the blackbox Sweep tests send the real signals).
  SimEnvironment env(SimEnvironment::shipped("h100"));
  nvml::Session session(sim());
  SweepStart start(session, {0});
  const unsigned before = driver_power_limit_mw(0);
  RestoreGuard guard(session, start.record, start.path);
  for (double watts : {300.0, 500.0}) {
    apply_setting(session, start.indices, Knob::PowerLimit, watts);
    if (watts == 300.0) break;  // the trial failed
  }
  ASSERT_EQ(driver_power_limit_mw(0), 300'000u);
  EXPECT_TRUE(guard.restore());
  EXPECT_EQ(driver_power_limit_mw(0), before);
}

TEST(RestoreGuard, KeepsTheRecordWhenAGpuCannotBeRestored) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  nvml::Session session(sim());
  SweepStart start(session, {0});
  const unsigned before = driver_power_limit_mw(0);
  sweep::RestoreEntry gone = start.record.gpus.front();
  gone.index = 7;
  gone.uuid = "GPU-00000000-0000-0000-0000-00000000dead";  // fell off the bus since
  start.record.gpus.push_back(gone);
  sweep::write_restore_record(start.path, start.record);
  RestoreGuard guard(session, start.record, start.path);
  apply_setting(session, start.indices, Knob::PowerLimit, 300);
  EXPECT_FALSE(guard.restore());
  EXPECT_FALSE(guard.restored());
  EXPECT_EQ(driver_power_limit_mw(0), before) << "the GPU that is there is restored anyway";
  ASSERT_TRUE(fs::exists(start.path)) << "the record is what --restore needs later";
  const auto kept = sweep::read_restore_record(start.path);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->gpus.size(), 2u);
}

// The locked SM clocks of the GPU with `uuid` as the simulated driver holds them in its state
// file (docs/scenarios.md, "State file"): 0 when not locked.
unsigned driver_locked_max_mhz(const SimEnvironment& env, const std::string& uuid) {
  std::ifstream in(fs::path(env.dir()) / "state.json");
  if (!in) return 0;  // nothing was ever set
  const auto state = nlohmann::json::parse(in);
  return state.at("gpus").at(uuid).value("locked_max_mhz", 0U);
}

TEST(RestoreGuard, UnlocksClocksLockedByAClockSweep) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  nvml::Session session(sim());
  SweepStart start(session, {0}, Knob::SmClock);
  ASSERT_TRUE(start.record.gpus.front().clocks_locked);
  const std::string uuid = start.record.gpus.front().uuid;
  ASSERT_FALSE(uuid.empty());
  {
    RestoreGuard guard(session, start.record, start.path);
    apply_setting(session, start.indices, Knob::SmClock, 1200);
    EXPECT_EQ(driver_locked_max_mhz(env, uuid), 1200u);
  }
  EXPECT_EQ(driver_locked_max_mhz(env, uuid), 0u);
  EXPECT_FALSE(fs::exists(start.path));
}

TEST(GpuSettings, LimitsReportTheCommonRangeAndWhatRestoringPutsBack) {
  SimEnvironment env(SimEnvironment::shipped("h100x4-straggler"));
  nvml::Session session(sim());
  const auto limits = read_setting_limits(session, {0, 1, 2, 3}, Knob::PowerLimit);
  EXPECT_GT(limits.max, limits.min);
  EXPECT_GT(limits.min, 0);
  EXPECT_EQ(limits.now.size(), 4u);
  EXPECT_EQ(limits.baseline * 1000, limits.now.front().power_limit_mw);
  EXPECT_NEAR(limits.p_max_w, 4 * limits.max, 1e-9);
  EXPECT_NO_THROW(check_setting_permission(session, limits, Knob::PowerLimit));
}

TEST(GpuSettings, AValueOutsideTheRangeIsRefusedByTheDriver) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  nvml::Session session(sim());
  const auto limits = read_setting_limits(session, {0}, Knob::PowerLimit);
  EXPECT_THROW(apply_setting(session, {0}, Knob::PowerLimit, limits.max + 100), Error);
}

}  // namespace
}  // namespace gpuscope::app
