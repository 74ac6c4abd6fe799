// Reading AMD GPUs: the energy accumulator made monotonic (32-bit wraps undone, a restart
// continued), AmdReader over the simulated AMD SMI and ROCm SMI through the real loader, and the
// AMD GPUs ROCm's variables leave visible.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <thread>

#include "amd/devices.hpp"
#include "amd/session.hpp"
#include "collect/amd_energy.hpp"
#include "collect/amd_reader.hpp"
#include "collect/gpu_selection.hpp"
#include "sim_env.hpp"

namespace gpuscope::collect {
namespace {

using testing::SimEnvironment;

constexpr double kRes = 15.3;  // µJ per count
constexpr std::uint64_t kWrap = std::uint64_t{1} << 32U;
constexpr std::int64_t kSecond = 1'000'000'000;

TEST(AmdEnergyCounter, CountsDifferencesInMillijoules) {
  AmdEnergyCounter counter(750.0);
  const auto first = counter.add(1'000'000, kRes, 0, 0);
  EXPECT_EQ(first.energy_mj, std::llround(1'000'000 * kRes / 1000));
  EXPECT_FALSE(first.event);
  // 700 W for 1 s: 700 J = 45,751,634 counts.
  const auto second = counter.add(1'000'000 + 45'751'634, kRes, 0, kSecond);
  EXPECT_NEAR(static_cast<double>(second.energy_mj - first.energy_mj), 700'000, 1);
}

TEST(AmdEnergyCounter, UndoesA32BitWrap) {
  AmdEnergyCounter counter(750.0);
  const std::uint64_t before = kWrap - 10'000'000;  // 153 J before the wrap
  const auto a = counter.add(before, kRes, 0, 0);
  // One second later, 700 J on: 153 J to the wrap and 547 J after it.
  const std::uint64_t after = 45'751'634 - 10'000'000;
  const auto b = counter.add(after, kRes, 0, kSecond);
  EXPECT_FALSE(b.event);
  EXPECT_NEAR(static_cast<double>(b.energy_mj - a.energy_mj), 700'000, 1);
  // And again, many wraps later: never a step back.
  std::int64_t last = b.energy_mj;
  std::uint64_t raw = after;
  for (int k = 2; k < 400; ++k) {
    raw = (raw + 45'751'634) % kWrap;
    const auto r = counter.add(raw, kRes, 0, k * kSecond);
    EXPECT_FALSE(r.event) << k;
    EXPECT_NEAR(static_cast<double>(r.energy_mj - last), 700'000, 1) << k;
    last = r.energy_mj;
  }
}

TEST(AmdEnergyCounter, ARestartContinuesAndIsSaid) {
  AmdEnergyCounter counter(750.0);
  const auto a = counter.add(std::uint64_t{1} << 40U, kRes, 0, 0);  // a 64-bit counter
  // A reset: the accumulator starts again from zero; 100 J counted since.
  const auto b = counter.add(6'535'948, kRes, 0, kSecond);
  ASSERT_TRUE(b.event);
  EXPECT_NE(b.event->find("went back"), std::string::npos) << *b.event;
  EXPECT_NE(b.event->find("counted since the restart"), std::string::npos) << *b.event;
  EXPECT_NEAR(static_cast<double>(b.energy_mj - a.energy_mj), 100'000, 1);
  // Counting goes on from there.
  const auto c = counter.add(6'535'948 * 2, kRes, 0, 2 * kSecond);
  EXPECT_FALSE(c.event);
  EXPECT_NEAR(static_cast<double>(c.energy_mj - b.energy_mj), 100'000, 1);
}

TEST(AmdEnergyCounter, AStepBackNoPowerExplainsIsARestartNotAWrap) {
  AmdEnergyCounter counter(750.0);
  // A 32-bit-sized count that goes back by half its range in 100 ms: a wrap would mean 32 kJ in
  // 0.1 s (330 kW); it is a restart, whose own count (1 MJ) is no more plausible: not counted.
  const auto a = counter.add(kWrap / 2 + 1000, kRes, 0, 0);
  const auto b = counter.add(kWrap / 2 - 100'000'000 + 1000, kRes, 0, kSecond / 10);
  ASSERT_TRUE(b.event);
  EXPECT_NE(b.event->find("not counted"), std::string::npos) << *b.event;
  EXPECT_EQ(b.energy_mj, a.energy_mj);
}

TEST(AmdEnergyCounter, TheDriversTimeStampWidensTheBound) {
  // The driver's clock says 100 s passed (a time-scaled simulation, or readings far apart):
  // a wrap of 65 kJ is plausible then, though only 0.1 s passed here.
  AmdEnergyCounter counter(750.0);
  const std::uint64_t before = kWrap - 1000;
  counter.add(before, kRes, 1000 * kSecond, 0);
  const auto r = counter.add(4'000'000'000U, kRes, 1100 * kSecond, kSecond / 10);
  EXPECT_FALSE(r.event);
}

// Every AMD GPU of the scenario, read through the simulated libraries.
struct AmdNode {
  explicit AmdNode(const std::string& scenario, bool amd_smi = true) : env(scenario) {
    amd::OpenOptions options;
    if (amd_smi) options.amd_smi_path = GPUSCOPE_TEST_SIM_AMD_SMI_LIBRARY;
    options.rocm_smi_path = GPUSCOPE_TEST_SIM_ROCM_SMI_LIBRARY;
    options.simulated = true;
    session = amd::Session::open(options);
  }
  SimEnvironment env;
  std::unique_ptr<amd::Session> session;
};

TEST(AmdReader, FillsTheMappedColumnsFromEitherLibrary) {
  for (const bool amd_smi : {true, false}) {
    AmdNode node(SimEnvironment::shipped("mi300x"), amd_smi);
    std::vector<std::string> notes;
    AmdReader reader(*node.session->devices().at(3), 7, 750.0, notes);
    if (amd_smi) {
      EXPECT_TRUE(notes.empty()) << notes.front();
    } else {  // ROCm SMI: no metrics table gpuscope reads, said once
      ASSERT_EQ(notes.size(), 1U);
      EXPECT_NE(notes[0].find("GPU 7: the GPU metrics table (XGMI bytes, throttle status) not "
                              "available"),
                std::string::npos)
          << notes[0];
    }
    EXPECT_EQ(reader.index(), 7U);
    SampleRow row;
    const ReadOutcome outcome = reader.read(row, 0, true);
    EXPECT_EQ(outcome.failed_calls, 0U);
    EXPECT_EQ(row.device_index, 7U);
    for (Metric m : {Metric::PowerW, Metric::EnergyMj, Metric::GpuUtilPct, Metric::MemoryUsedBytes,
                     Metric::MemoryFreeBytes, Metric::TemperatureC, Metric::MemoryTemperatureC,
                     Metric::GraphicsClockMhz, Metric::SmClockMhz, Metric::PowerLimitW}) {
      EXPECT_TRUE(row.get(m)) << kMetrics[static_cast<std::size_t>(m)].name << " amd_smi "
                              << amd_smi;
    }
    // What AMD has no word for stays absent, never 0.
    for (Metric m : {Metric::SmActivePct, Metric::TensorActivePct, Metric::MemUtilPct,
                     Metric::ClockEventReasons, Metric::PowerInstantW}) {
      EXPECT_FALSE(row.get(m)) << kMetrics[static_cast<std::size_t>(m)].name;
    }
    // AMD's own: the memory controllers' activity from either library; multimedia activity, the
    // XGMI counters and the throttle bits through AMD SMI only.
    EXPECT_TRUE(row.get(Metric::UmcActivityPct));
    for (Metric m : {Metric::MmActivityPct, Metric::XgmiReadBytes, Metric::XgmiWriteBytes,
                     Metric::AmdThrottleStatus}) {
      EXPECT_EQ(row.get(m).has_value(), amd_smi) << kMetrics[static_cast<std::size_t>(m)].name;
    }
    EXPECT_EQ(*row.get(Metric::PowerLimitW), 750.0);
    EXPECT_EQ(*row.get(Metric::MemoryUsedBytes) + *row.get(Metric::MemoryFreeBytes),
              192.0 * 1024 * 1024 * 1024);
    PowerRow power;
    reader.read_power(power, true);
    EXPECT_TRUE(power.power_w);
    ASSERT_TRUE(power.energy_mj);
    EXPECT_GE(*power.energy_mj, *row.get(Metric::EnergyMj));
  }
}

TEST(AmdMetricsTable, SumsTheLinksAndLeavesOutWhatTheFormatLacks) {
  amdsmi_gpu_metrics_t table;
  std::memset(&table, 0xFF, sizeof table);  // a format without the XGMI counters (before 1.4)
  amd::MetricsTable read = amd::read_metrics_table(table);
  EXPECT_FALSE(read.xgmi_read_kb);
  EXPECT_FALSE(read.xgmi_write_kb);
  EXPECT_FALSE(read.indep_throttle_status);
  // Four links of eight counted; the others all ones. Power (PPT0) and hotspot throttling.
  for (unsigned link = 0; link < 4; ++link) {
    table.xgmi_read_data_acc[link] = 1000 + link;
    table.xgmi_write_data_acc[link] = 10;
  }
  table.indep_throttle_status = (std::uint64_t{1} << 0U) | (std::uint64_t{1} << 36U);
  read = amd::read_metrics_table(table);
  EXPECT_EQ(read.xgmi_read_kb, 4006U);
  EXPECT_EQ(read.xgmi_write_kb, 40U);
  EXPECT_EQ(read.indep_throttle_status, (std::uint64_t{1} << 0U) | (std::uint64_t{1} << 36U));
}

TEST(AmdMetricsTable, ThrottleBitsStayExactInADouble) {
  // PPM (56) and FIT (57) move to 48 and 49; the others keep their place.
  const std::uint64_t bits = 1U | (std::uint64_t{1} << 36U) | (std::uint64_t{3} << 56U);
  const std::uint64_t folded = folded_throttle_bits(bits);
  EXPECT_EQ(folded, 1U | (std::uint64_t{1} << 36U) | (std::uint64_t{3} << 48U));
  EXPECT_EQ(static_cast<std::uint64_t>(static_cast<double>(folded)), folded);
  // Every bit the driver defines (power 0-7, current 16-23, temperature 32-47, other 56-57) set
  // at once still fits a double's 53 bits.
  const std::uint64_t defined = 0xFFU | (std::uint64_t{0xFF} << 16U) |
                                (std::uint64_t{0xFFFF} << 32U) | (std::uint64_t{3} << 56U);
  const std::uint64_t all = folded_throttle_bits(defined);
  EXPECT_EQ(all >> 50U, 0U);
  EXPECT_EQ(static_cast<std::uint64_t>(static_cast<double>(all)), all);
}

TEST(AmdReader, AResetFailsReadsThenTheEnergyGoesOn) {
  AmdNode node(SimEnvironment::fixture("amd-reset"));
  std::vector<std::string> notes;
  AmdReader reader(*node.session->devices().at(0), 0, 750.0, notes);
  std::optional<double> last;
  bool failed = false;
  bool said = false;
  // The fixture resets the GPU 3 s of scenario time into the run (0.3 s at ten times real
  // speed), for 0.5 s (50 ms).
  for (int k = 0; k < 40; ++k) {
    SampleRow row;
    const ReadOutcome outcome = reader.read(row, 0, true);
    failed = failed || outcome.failed_calls > 0;
    if (outcome.counter_event) said = true;
    if (auto mj = row.get(Metric::EnergyMj)) {
      if (last) {
        EXPECT_GE(*mj, *last) << "the counter went back at read " << k;
      }
      last = mj;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(failed) << "no read failed during the reset";
  EXPECT_TRUE(said) << "the accumulator's restart was not said";
}

std::vector<DeviceDescription> mixed_node() {
  std::vector<DeviceDescription> devices(4);
  for (unsigned i = 0; i < 4; ++i) {
    devices[i].index = i;
    if (i == 0) continue;  // GPU 0: an NVIDIA one
    devices[i].vendor = Vendor::Amd;
    devices[i].vendor_index = i - 1;
    devices[i].uuid = fmt::format("{}1a2b3c-0000-1000-8000-00000000000{}", i, i);
  }
  devices[0].uuid = "GPU-00000000-1111-2222-3333-444444444444";
  return devices;
}

TEST(AmdSelection, RocrThenHipAsRocmAppliesThem) {
  const auto devices = mixed_node();
  auto all = select_amd_visible({}, devices);
  EXPECT_EQ(all.indices, (std::vector<unsigned>{1, 2, 3}));
  AmdVisibleLists lists;
  lists.rocr = "2,0";
  auto rocr = select_amd_visible(lists, devices);
  EXPECT_EQ(rocr.indices, (std::vector<unsigned>{3, 1}));
  EXPECT_NE(rocr.notes.front().find("ROCR_VISIBLE_DEVICES=2,0"), std::string::npos);
  lists.hip = "1";  // the second of what ROCR left: library index 0
  EXPECT_EQ(select_amd_visible(lists, devices).indices, (std::vector<unsigned>{1}));
  lists = {};
  lists.rocr = "GPU-21A2B3C";  // a UUID prefix, as ROCm writes one: no dashes, any case
  EXPECT_EQ(select_amd_visible(lists, devices).indices, (std::vector<unsigned>{2}));
  lists.rocr = "";
  EXPECT_TRUE(select_amd_visible(lists, devices).indices.empty());
  lists.rocr = "0,9";  // beyond what this process sees: all, said
  auto beyond = select_amd_visible(lists, devices);
  EXPECT_EQ(beyond.indices.size(), 3U);
  EXPECT_NE(beyond.notes.back().find("beyond"), std::string::npos);
  lists.rocr = "nonsense";
  EXPECT_THROW(select_amd_visible(lists, devices), Error);
}

TEST(AmdSelection, GpusOptionTakesAmdIndicesAndUuids) {
  const auto devices = mixed_node();
  EXPECT_EQ(select_gpus("0,3", devices, {}).indices, (std::vector<unsigned>{0, 3}));
  EXPECT_EQ(select_gpus("31a2b3c", devices, {}).indices, (std::vector<unsigned>{3}));
  EXPECT_EQ(select_gpus("GPU-11a2b3c", devices, {}).indices, (std::vector<unsigned>{1}));
  EXPECT_EQ(select_gpus("GPU-0000", devices, {}).indices, (std::vector<unsigned>{0}));
}

TEST(AmdSelection, TheJobsEnvironmentOnEachKindOfNode) {
  using Env = std::map<std::string, std::string>;
  const auto lookup = [](const Env& env) -> util::EnvLookup {
    return [env](const std::string& name) -> std::optional<std::string> {
      const auto it = env.find(name);
      return it == env.end() ? std::nullopt : std::optional(it->second);
    };
  };
  auto devices = mixed_node();
  // Both vendors: CUDA_VISIBLE_DEVICES chooses among the NVIDIA GPUs, ROCm's among the AMD ones.
  auto both =
      amd_visible(lookup({{"CUDA_VISIBLE_DEVICES", "0"}, {"ROCR_VISIBLE_DEVICES", "1"}}), devices);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->indices, (std::vector<unsigned>{0, 2}));
  // Without ROCm's variables the environment leaves the choice to CUDA_VISIBLE_DEVICES alone.
  EXPECT_FALSE(amd_visible(lookup({{"CUDA_VISIBLE_DEVICES", "0"}}), devices));
  // An AMD-only node: CUDA_VISIBLE_DEVICES is HIP's (SLURM sets it there).
  devices.erase(devices.begin());
  auto amd_only = amd_visible(lookup({{"CUDA_VISIBLE_DEVICES", "1"}}), devices);
  ASSERT_TRUE(amd_only);
  EXPECT_EQ(amd_only->indices, (std::vector<unsigned>{2}));
  // A node without AMD GPUs: not ROCm's business.
  std::vector<DeviceDescription> nvidia(1);
  EXPECT_FALSE(amd_visible(lookup({{"ROCR_VISIBLE_DEVICES", "0"}}), nvidia));
}

}  // namespace
}  // namespace gpuscope::collect
