// Sampling MIG devices (docs/mig.md) against the simulated driver: each GPU instance's own
// activity and memory, nothing its GPU does not split, and instances that come and go.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "collect/describe.hpp"
#include "collect/gpu_selection.hpp"
#include "collect/sampler.hpp"
#include "collect/saturation.hpp"
#include "core/event_kinds.hpp"
#include "recording_sink.hpp"
#include "sim_env.hpp"
#include "support/programs.hpp"

namespace gpuscope::collect {
namespace {

using testing::SimEnvironment;

using testing::RecordingSink;

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

struct MigRun {
  RecordingSink sink;
  std::vector<std::string> notes;
  std::vector<DeviceDescription> devices;  // what was sampled
};

// Samples what `gpus` selects on `scenario` for `duration`, as profile does: the GPUs, then
// their MIG devices, with a fast power cadence and the health cadence on. The simulated driver's
// time is the wall clock's, so `duration` lets the scenario's time pass; then sampling goes on
// until the sampler has completed as many ticks as `duration` holds, however loaded the
// machine is (a tick late is skipped, not counted), so the rows asserted are there.
void sample_mig(const std::string& scenario, const std::string& gpus,
                std::chrono::milliseconds duration, MigRun& run) {
  SimEnvironment env(SimEnvironment::fixture(scenario));
  nvml::Session session(nvml::Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true}));
  const SystemDescription system = describe_system(session);
  const GpuSelection selection = select_gpus(gpus, system.devices, {});
  const auto rows = selection.rows();
  for (unsigned index : rows) run.devices.push_back(device_at(system.devices, index));
  BackendOptions backend;
  backend.metrics_source = "auto";
  backend.dcgm_library = GPUSCOPE_TEST_SIM_DCGM_LIBRARY;  // the scenario's DCGM, where it has one
  OpenedReaders opened =
      open_readers(session, rows, run.devices, backend, std::chrono::milliseconds(50));
  run.notes = opened.notes;
  SamplerOptions options{std::chrono::milliseconds(50), std::chrono::milliseconds(20),
                         std::chrono::milliseconds(200)};
  Sampler sampler(std::move(opened.readers), options, run.sink);
  sampler.start();
  std::this_thread::sleep_for(duration);
  const std::int64_t ticks = duration / options.interval;
  EXPECT_TRUE(
      testing::eventually([&] { return sampler.stats().ticks >= ticks; }, std::chrono::seconds(60)))
      << "the sampler completed " << sampler.stats().ticks << " ticks of " << ticks;
  sampler.stop();
}

// The mean of `metric` over the rows of device `index` that have it.
std::optional<double> mean(const MigRun& run, unsigned index, Metric metric) {
  double sum = 0;
  int n = 0;
  for (const auto& row : run.sink.samples) {
    if (row.device_index != index) continue;
    if (auto v = row.get(metric)) {
      sum += *v;
      ++n;
    }
  }
  return n == 0 ? std::nullopt : std::optional<double>(sum / n);
}

std::size_t rows_of(const MigRun& run, unsigned index) {
  std::size_t n = 0;
  for (const auto& row : run.sink.samples) {
    if (row.device_index == index) ++n;
  }
  return n;
}

std::size_t notes_naming(const MigRun& run, const std::string& words) {
  std::size_t n = 0;
  for (const auto& note : run.notes) {
    if (note.find(words) != std::string::npos) ++n;
  }
  return n;
}

// The scenario's levels of each instance (tests/fixtures/scenarios/h100-mig-mixed.json).
struct Level {
  unsigned index;
  double util, sm_active, tensor, dram, used_gib;
};
const Level kH100[] = {
    {1001, 95, 85, 65, 55, 34}, {1003, 50, 35, 20, 25, 15}, {1007, 25, 15, 0, 6, 3}};

TEST(MigSampling, EachInstanceIsRecoveredWithinOnePoint) {
  MigRun run;
  sample_mig("h100-mig-mixed", "all", std::chrono::milliseconds(600), run);
  ASSERT_EQ(run.devices.size(), 4U);
  for (const Level& want : kH100) {
    SCOPED_TRACE(want.index);
    EXPECT_GE(rows_of(run, want.index), 4U);
    ASSERT_TRUE(mean(run, want.index, Metric::SmActivePct).has_value());
    EXPECT_NEAR(*mean(run, want.index, Metric::GraphicsActivePct), want.util, 1.0);
    EXPECT_NEAR(*mean(run, want.index, Metric::SmActivePct), want.sm_active, 1.0);
    EXPECT_NEAR(*mean(run, want.index, Metric::TensorActivePct), want.tensor, 1.0);
    EXPECT_NEAR(*mean(run, want.index, Metric::DramActivePct), want.dram, 1.0);
    EXPECT_NEAR(*mean(run, want.index, Metric::MemoryUsedBytes) / (1ULL << 30U), want.used_gib,
                0.01);
    // What the GPU does not split is absent, never zero.
    for (Metric m : {Metric::PowerW, Metric::EnergyMj, Metric::TemperatureC, Metric::SmClockMhz,
                     Metric::GpuUtilPct, Metric::PcieTxBytesPerS, Metric::ClockEventReasons}) {
      EXPECT_FALSE(mean(run, want.index, m).has_value()) << info(m).name;
    }
  }
  // The GPU itself: its power, temperature and clocks, its whole-GPU GPM; no utilization rates.
  EXPECT_TRUE(mean(run, 0, Metric::PowerW).has_value());
  EXPECT_TRUE(mean(run, 0, Metric::TemperatureC).has_value());
  EXPECT_NEAR(*mean(run, 0, Metric::SmActivePct), 60, 1.0);
  EXPECT_FALSE(mean(run, 0, Metric::GpuUtilPct).has_value());
  for (const auto& row : run.sink.power) EXPECT_EQ(row.device_index, 0U);
  for (const auto& row : run.sink.health) EXPECT_EQ(row.device_index, 0U);
  EXPECT_FALSE(run.sink.power.empty());
  EXPECT_TRUE(run.sink.events.empty()) << run.sink.events.front().detail;
  // One note on the utilization rates, for the GPU; none per instance for what it lacks.
  EXPECT_EQ(notes_naming(run, "utilization (none for a GPU in MIG mode)"), 1U);
  EXPECT_EQ(notes_naming(run, "MIG device"), 0U);
  EXPECT_EQ(notes_naming(run,
                         "saturation metrics of GPU 0 GI 1 (4g.40gb), GPU 0 GI 3 "
                         "(2g.20gb), GPU 0 GI 7 (1g.10gb) from GPM (GPM of its GPU "
                         "instance)"),
            1U);
}

TEST(MigSampling, AMigUuidSamplesThatInstanceAndItsParentOnly) {
  MigRun run;
  sample_mig("h100-mig-mixed", "MIG-b1000000-0000-5000-8000-000000000022",
             std::chrono::milliseconds(400), run);
  ASSERT_EQ(run.devices.size(), 2U);
  std::map<unsigned, std::size_t> rows;
  for (const auto& row : run.sink.samples) ++rows[row.device_index];
  EXPECT_EQ(rows.size(), 2U);
  EXPECT_GT(rows[0], 0U);
  EXPECT_GT(rows[1003], 0U);
  EXPECT_NEAR(*mean(run, 1003, Metric::SmActivePct), 35, 1.0);
}

// The scenario's levels of each instance (tests/fixtures/scenarios/a100-mig-mixed.json).
const Level kA100[] = {{1001, 92, 80, 55, 45, 30},
                       {1003, 60, 40, 25, 30, 12},
                       {1007, 20, 12, 0, 5, 4},
                       {1008, 0, 0, 0, 0, 1}};

TEST(MigSampling, AnA100sInstancesTakeDcgmsGpuInstanceEntities) {
  MigRun run;
  sample_mig("a100-mig-mixed", "all", std::chrono::milliseconds(700), run);
  ASSERT_EQ(run.devices.size(), 5U);
  for (const Level& want : kA100) {
    SCOPED_TRACE(want.index);
    EXPECT_NEAR(*mean(run, want.index, Metric::MemoryUsedBytes) / (1ULL << 30U), want.used_gib,
                0.01);
    // Its own instance's activity, as DCGM's GPU-instance entity gives it (a fraction of it).
    ASSERT_TRUE(mean(run, want.index, Metric::SmActivePct).has_value());
    EXPECT_NEAR(*mean(run, want.index, Metric::GraphicsActivePct), want.util, 1.0);
    EXPECT_NEAR(*mean(run, want.index, Metric::SmActivePct), want.sm_active, 1.0);
    EXPECT_NEAR(*mean(run, want.index, Metric::TensorActivePct), want.tensor, 1.0);
    EXPECT_NEAR(*mean(run, want.index, Metric::DramActivePct), want.dram, 1.0);
    // PCIe and NVLink, power and utilization are the GPU's: absent, not its GPU's values.
    for (Metric m :
         {Metric::PowerW, Metric::PcieTxBytesPerS, Metric::NvlinkTxBytesPerS, Metric::GpuUtilPct}) {
      EXPECT_FALSE(mean(run, want.index, m).has_value()) << info(m).name;
    }
  }
  // The GPU itself still takes its whole-GPU DCGM values.
  EXPECT_NEAR(*mean(run, 0, Metric::SmActivePct), 55, 1.0);
  EXPECT_EQ(notes_naming(run,
                         "GPU 0 GI 1 (3g.40gb), GPU 0 GI 3 (2g.20gb), GPU 0 GI 7 "
                         "(1g.10gb), GPU 0 GI 8 (1g.10gb) from DCGM (DCGM's GPU-instance "
                         "entity"),
            1U);
  EXPECT_EQ(notes_naming(run, "saturation metrics (SM active"), 0U);
  for (const auto& d : run.devices) {
    EXPECT_EQ(d.saturation_source.value_or(""), "dcgm") << d.index;
  }
}

TEST(MigSampling, DcgmUnprivilegedOnAMigGpuIsOneNoteAndNoMetrics) {
  ScopedEnv unprivileged("GPUSCOPE_SIM_PRIVILEGED", "0");
  MigRun run;
  sample_mig("a100-mig-mixed", "all", std::chrono::milliseconds(300), run);
  ASSERT_EQ(run.devices.size(), 5U);
  for (const Level& want : kA100) {
    EXPECT_FALSE(mean(run, want.index, Metric::SmActivePct).has_value()) << want.index;
    EXPECT_TRUE(mean(run, want.index, Metric::MemoryUsedBytes).has_value()) << want.index;
  }
  EXPECT_FALSE(mean(run, 0, Metric::SmActivePct).has_value());
  // One line for the GPU and all its instances, saying why and what to do.
  EXPECT_EQ(notes_naming(run, "REQUIRES_ROOT"), 1U);
  EXPECT_EQ(notes_naming(run,
                         "GPU 0, GPU 0 GI 1 (3g.40gb), GPU 0 GI 3 (2g.20gb), GPU 0 GI 7 "
                         "(1g.10gb), GPU 0 GI 8 (1g.10gb): saturation metrics"),
            1U);
  EXPECT_EQ(notes_naming(run, "run gpuscope as root"), 1U);
  EXPECT_EQ(notes_naming(run, "GPM"), 1U);
}

TEST(MigSampling, InstancesDestroyedAndCreatedWhileSamplingAreEventsOnce) {
  ScopedEnv scale("GPUSCOPE_SIM_TIME_SCALE", "20");  // the 6 s change comes after 300 ms
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  ScopedEnv epoch(
      "GPUSCOPE_SIM_EPOCH_NS",
      std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
  MigRun run;
  sample_mig("h100-mig-churn", "all", std::chrono::milliseconds(1300), run);
  // At the start: the GPU, its 3g.40gb (GI 1) and its 1g.10gb (GI 7).
  ASSERT_EQ(run.devices.size(), 3U);
  std::vector<std::string> gone, appeared;
  std::int64_t gone_at = 0;
  for (const auto& e : run.sink.events) {
    EXPECT_EQ(e.kind, EventKind::MigInstance) << e.detail;
    if (e.detail.find("is gone") != std::string::npos) {
      gone.push_back(e.detail);
      EXPECT_EQ(e.device_index, 1001U);
      gone_at = e.mono_ns;
    }
    if (e.detail.find("appeared") != std::string::npos) {
      appeared.push_back(e.detail);
      EXPECT_EQ(e.device_index, 0U);
    }
  }
  ASSERT_EQ(gone.size(), 1U);
  EXPECT_NE(gone[0].find("MIG device GPU 0 GI 1 (3g.40gb) is gone"), std::string::npos);
  ASSERT_EQ(appeared.size(), 1U);
  EXPECT_NE(appeared[0].find("MIG device GPU 0 GI 3 (2g.20gb) appeared during the run "
                             "(MIG-c1000000-0000-5000-8000-000000000022)"),
            std::string::npos)
      << appeared[0];
  // Nothing more from the instance that went; the others carry on, the GPU is not lost.
  for (const auto& row : run.sink.samples) {
    if (row.device_index == 1001) {
      EXPECT_LT(row.mono_ns, gone_at);
    }
  }
  EXPECT_GT(rows_of(run, 1001), 0U);
  EXPECT_GE(rows_of(run, 1007), 15U);
  EXPECT_GE(rows_of(run, 0), 15U);
  EXPECT_NEAR(*mean(run, 1007, Metric::SmActivePct), 20, 1.0);
}

}  // namespace
}  // namespace gpuscope::collect
