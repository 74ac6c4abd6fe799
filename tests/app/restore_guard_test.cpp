// The sweep's safety net against the simulated driver's own state: whichever way a sweep ends,
// the GPUs' power limits and clocks go back, and the restore record goes only when they did.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "amd/session.hpp"
#include "app/sweep/gpu_settings.hpp"
#include "collect/amd_gpus.hpp"
#include "collect/node_gpus.hpp"
#include "collect/nvidia_gpus.hpp"
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

// The node a sweep sees: the simulated NVIDIA GPUs through NVML.
collect::NodeGpus nvidia_node() {
  collect::NodeGpus node;
  node.vendors.push_back(std::make_unique<collect::NvidiaGpus>(sim()));
  node.vendors.back()->describe(node.system);
  return node;
}

// The node's simulated AMD GPUs through AMD SMI (ROCm SMI without it).
collect::NodeGpus amd_node(bool amd_smi = true) {
  collect::NodeGpus node;
  amd::OpenOptions options;
  if (amd_smi) options.amd_smi_path = GPUSCOPE_TEST_SIM_AMD_SMI_LIBRARY;
  options.rocm_smi_path = GPUSCOPE_TEST_SIM_ROCM_SMI_LIBRARY;
  options.simulated = true;
  node.vendors.push_back(std::make_unique<collect::AmdGpus>(amd::Session::open(options)));
  node.system.nvidia = false;
  node.vendors.back()->describe(node.system);
  node.system.devices = node.system.amd->devices;
  return node;
}

// A sweep's start: the record of the GPUs as they are, written before anything changes.
struct SweepStart {
  explicit SweepStart(const collect::NodeGpus& node, std::vector<unsigned> gpus,
                      Knob knob = Knob::PowerLimit)
      : controls(collect::open_controls(node, gpus)),
        limits(read_setting_limits(controls, knob)),
        path(fs::path(dir.path()) / "sweep.db.restore.json") {
    record.output = (fs::path(dir.path()) / "sweep.db").string();
    record.gpus = limits.now;
    sweep::write_restore_record(path, record);
  }
  collect::GpuControls controls;
  SettingLimits limits;
  testing::TempDir dir;
  fs::path path;
  sweep::RestoreRecord record;
};

TEST(RestoreGuard, RestoresOnSuccessAndRemovesTheRecord) {
  SimEnvironment env(SimEnvironment::shipped("h100x4-straggler"));
  const auto node = nvidia_node();
  SweepStart start(node, {0, 2});
  const unsigned before = driver_power_limit_mw(0);
  ASSERT_GT(before, 400'000u);
  {
    RestoreGuard guard(start.controls, start.record, start.path);
    apply_setting(start.controls, Knob::PowerLimit, 400);
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
  const auto node = nvidia_node();
  SweepStart start(node, {0});
  const unsigned before = driver_power_limit_mw(0);
  try {
    RestoreGuard guard(start.controls, start.record, start.path);
    apply_setting(start.controls, Knob::PowerLimit, 350);
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
  const auto node = nvidia_node();
  SweepStart start(node, {0});
  const unsigned before = driver_power_limit_mw(0);
  RestoreGuard guard(start.controls, start.record, start.path);
  for (double watts : {300.0, 500.0}) {
    apply_setting(start.controls, Knob::PowerLimit, watts);
    if (watts == 300.0) break;  // the trial failed
  }
  ASSERT_EQ(driver_power_limit_mw(0), 300'000u);
  EXPECT_TRUE(guard.restore());
  EXPECT_EQ(driver_power_limit_mw(0), before);
}

TEST(RestoreGuard, KeepsTheRecordWhenAGpuCannotBeRestored) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  const auto node = nvidia_node();
  SweepStart start(node, {0});
  const unsigned before = driver_power_limit_mw(0);
  sweep::RestoreEntry gone = start.record.gpus.front();
  gone.index = 7;
  gone.uuid = "GPU-00000000-0000-0000-0000-00000000dead";  // fell off the bus since
  start.record.gpus.push_back(gone);
  sweep::write_restore_record(start.path, start.record);
  RestoreGuard guard(start.controls, start.record, start.path);
  apply_setting(start.controls, Knob::PowerLimit, 300);
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
  const auto node = nvidia_node();
  SweepStart start(node, {0}, Knob::SmClock);
  ASSERT_TRUE(start.record.gpus.front().clocks_locked);
  const std::string uuid = start.record.gpus.front().uuid;
  ASSERT_FALSE(uuid.empty());
  {
    RestoreGuard guard(start.controls, start.record, start.path);
    apply_setting(start.controls, Knob::SmClock, 1200);
    EXPECT_EQ(driver_locked_max_mhz(env, uuid), 1200u);
  }
  EXPECT_EQ(driver_locked_max_mhz(env, uuid), 0u);
  EXPECT_FALSE(fs::exists(start.path));
}

TEST(GpuSettings, LimitsReportTheCommonRangeAndWhatRestoringPutsBack) {
  SimEnvironment env(SimEnvironment::shipped("h100x4-straggler"));
  const auto node = nvidia_node();
  const auto gpus = collect::open_controls(node, {0, 1, 2, 3});
  const auto limits = read_setting_limits(gpus, Knob::PowerLimit);
  EXPECT_GT(limits.max, limits.min);
  EXPECT_GT(limits.min, 0);
  EXPECT_EQ(limits.now.size(), 4u);
  EXPECT_EQ(limits.baseline * 1000, limits.now.front().power_limit_mw);
  EXPECT_NEAR(limits.p_max_w, 4 * limits.max, 1e-9);
  EXPECT_NO_THROW(check_setting_permission(gpus, limits, Knob::PowerLimit));
}

TEST(GpuSettings, AValueOutsideTheRangeIsRefusedByTheDriver) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  const auto node = nvidia_node();
  const auto gpus = collect::open_controls(node, {0});
  const auto limits = read_setting_limits(gpus, Knob::PowerLimit);
  EXPECT_THROW(apply_setting(gpus, Knob::PowerLimit, limits.max + 100), Error);
}

// The cap an AMD GPU holds now, as a new session of the library reads it.
double amd_cap_w(unsigned vendor_index) {
  const auto node = amd_node();  // no NVIDIA GPU: its index is the library's
  return collect::open_controls(node, {vendor_index}).at(0)->power_limits().value().current_w;
}

TEST(RestoreGuard, AmdPowerCapsGoBackThroughEitherLibrary) {
  for (const bool amd_smi : {true, false}) {
    SimEnvironment env(SimEnvironment::shipped("mi300x"));
    const auto node = amd_node(amd_smi);
    SweepStart start(node, {0, 2});
    EXPECT_EQ(start.limits.baseline, 750);  // the MI300X's default cap
    EXPECT_GT(start.limits.max, start.limits.min);
    EXPECT_NO_THROW(check_setting_permission(start.controls, start.limits, Knob::PowerLimit));
    {
      RestoreGuard guard(start.controls, start.record, start.path);
      apply_setting(start.controls, Knob::PowerLimit, 500);
      EXPECT_EQ(amd_cap_w(0), 500);
      EXPECT_EQ(amd_cap_w(2), 500);
      EXPECT_EQ(amd_cap_w(1), 750) << "a GPU outside the sweep was changed";
    }
    EXPECT_EQ(amd_cap_w(0), 750) << "amd_smi " << amd_smi;
    EXPECT_EQ(amd_cap_w(2), 750);
    EXPECT_FALSE(fs::exists(start.path));
    // The energy counter a trial is measured with goes on.
    const auto first = start.controls.front()->energy_mj();
    ASSERT_TRUE(first);
    EXPECT_GE(start.controls.front()->energy_mj().value_or(-1), *first);
  }
}

TEST(GpuSettings, AmdGpusRefuseClockSweepsAndSayPermission) {
  SimEnvironment env(SimEnvironment::shipped("mi300x"));
  {
    const auto node = amd_node();
    const auto gpus = collect::open_controls(node, {0});
    try {
      read_setting_limits(gpus, Knob::SmClock);
      ADD_FAILURE() << "a clock sweep on an AMD GPU was not refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("sweep AMD GPUs with --power-limits"), std::string::npos)
          << e.what();
    }
  }
  setenv("GPUSCOPE_SIM_PRIVILEGED", "0", 1);
  const auto node = amd_node();
  const auto gpus = collect::open_controls(node, {0});
  const auto limits = read_setting_limits(gpus, Knob::PowerLimit);
  try {
    check_setting_permission(gpus, limits, Knob::PowerLimit);
    ADD_FAILURE() << "setting a cap without permission was not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no permission to set power limits on GPU 0"),
              std::string::npos)
        << e.what();
  }
  unsetenv("GPUSCOPE_SIM_PRIVILEGED");
}

}  // namespace
}  // namespace gpuscope::app
