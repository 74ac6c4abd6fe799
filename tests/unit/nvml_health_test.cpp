// Health calls through the real loader against the simulated driver.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nvml/events.hpp"
#include "nvml/session.hpp"
#include "sim_env.hpp"

namespace gpuscope::nvml {
namespace {

using testing::SimEnvironment;

std::shared_ptr<const Library> sim() {
  return Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
}

TEST(NvmlHealth, EventDataLayoutMatchesNvmlH) {
  EXPECT_EQ(sizeof(nvmlEventData_t), 32U);
  EXPECT_EQ(offsetof(nvmlEventData_t, device), 0U);
  EXPECT_EQ(offsetof(nvmlEventData_t, eventType), 8U);
  EXPECT_EQ(offsetof(nvmlEventData_t, eventData), 16U);
  EXPECT_EQ(offsetof(nvmlEventData_t, gpuInstanceId), 24U);
  EXPECT_EQ(offsetof(nvmlEventData_t, computeInstanceId), 28U);
  EXPECT_EQ(sizeof(nvmlEventSet_t), sizeof(void*));
  EXPECT_EQ(kEventTypeAll, 0xFF9FULL);
}

TEST(NvmlHealth, HealthyH100AnswersAsTheH200Does) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  Session session(sim());
  Device device = session.device(0);
  auto ecc = device.ecc_mode();
  ASSERT_TRUE(ecc.has_value()) << session.library()->describe(ecc.error());
  EXPECT_TRUE(ecc->current);
  EXPECT_TRUE(ecc->pending);
  for (auto type : {MemoryError::Corrected, MemoryError::Uncorrected}) {
    for (auto counter : {EccCounter::Volatile, EccCounter::Aggregate}) {
      auto count = device.total_ecc_errors(type, counter);
      ASSERT_TRUE(count.has_value());
      EXPECT_EQ(*count, 0U);
    }
  }
  auto rows = device.remapped_rows();
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->corrected, 0U);
  EXPECT_EQ(rows->uncorrected, 0U);
  EXPECT_FALSE(rows->pending);
  EXPECT_FALSE(rows->failure);
  EXPECT_EQ(*device.pcie_replay_counter(), 0U);
  for (auto utilization : {device.encoder_utilization(), device.decoder_utilization()}) {
    ASSERT_TRUE(utilization.has_value());
    EXPECT_EQ(utilization->percent, 0U);
    EXPECT_EQ(utilization->sampling_period_us, 100000U);
  }
  EXPECT_EQ(*device.supported_event_types(), kEventTypeAll);
}

TEST(NvmlHealth, RetiredPagesAreNotSupportedOnHopper) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  Session session(sim());
  unsigned count = 0;
  auto status =
      session.library()->call(&FunctionTable::DeviceGetRetiredPages, session.device(0).handle(),
                              kPageRetirementDoubleBitEcc, &count, nullptr);
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code, kErrorNotSupported);
}

TEST(NvmlHealth, WithoutEccTheEccCallsAreNotSupported) {
  SimEnvironment env(SimEnvironment::fixture("no-ecc"));
  Session session(sim());
  Device device = session.device(0);
  ASSERT_FALSE(device.ecc_mode().has_value());
  EXPECT_EQ(device.ecc_mode().error().code, kErrorNotSupported);
  auto count = device.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile);
  ASSERT_FALSE(count.has_value());
  EXPECT_EQ(count.error().code, kErrorNotSupported);
  ASSERT_FALSE(device.remapped_rows().has_value());
  EXPECT_EQ(device.remapped_rows().error().code, kErrorNotSupported);
  const auto types = device.supported_event_types();
  ASSERT_TRUE(types.has_value());
  EXPECT_EQ(*types & kEventTypeDoubleBitEccError, 0U);
  EXPECT_NE(*types & kEventTypeXidCriticalError, 0U);
  // Registering an unsupported type registers nothing, but the set stays usable.
  auto set = EventSet::create(session.library());
  ASSERT_TRUE(set.has_value());
  auto refused = set->register_events(device, kEventTypeDoubleBitEccError);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, kErrorNotSupported);
  EXPECT_TRUE(set->register_events(device, kEventTypeXidCriticalError).has_value());
}

TEST(NvmlHealth, EventWaitTimesOutWithinItsTimeout) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  Session session(sim());
  auto set = EventSet::create(session.library());
  ASSERT_TRUE(set.has_value()) << session.library()->describe(set.error());
  ASSERT_TRUE(set->register_events(session.device(0), kEventTypeXidCriticalError).has_value());

  auto start = std::chrono::steady_clock::now();
  auto at_once = set->wait(0);
  const auto immediate = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(at_once.has_value());
  EXPECT_FALSE(at_once->has_value());
  EXPECT_LT(immediate, std::chrono::milliseconds(20));

  start = std::chrono::steady_clock::now();
  auto waited = set->wait(30);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(waited.has_value());
  EXPECT_FALSE(waited->has_value());
  EXPECT_GE(elapsed, std::chrono::milliseconds(25));
  EXPECT_LT(elapsed, std::chrono::milliseconds(500));
}

TEST(NvmlHealth, EveryHealthCallReportsALostGpu) {
  SimEnvironment env(SimEnvironment::shipped("h100x2-gpu-lost"));
  setenv("GPUSCOPE_SIM_TIME_SCALE", "100", 1);  // 8 scenario seconds pass in 80 ms
  Session session(sim());
  Device healthy = session.device(0);
  Device doomed = session.device(1);
  auto set = EventSet::create(session.library());
  ASSERT_TRUE(set.has_value());
  ASSERT_TRUE(set->register_events(doomed, kEventTypeXidCriticalError).has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  const auto lost = [](const auto& result) {
    return !result.has_value() && result.error().code == kErrorGpuIsLost;
  };
  EXPECT_TRUE(lost(doomed.ecc_mode()));
  EXPECT_TRUE(lost(doomed.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate)));
  EXPECT_TRUE(lost(doomed.remapped_rows()));
  EXPECT_TRUE(lost(doomed.pcie_replay_counter()));
  EXPECT_TRUE(lost(doomed.encoder_utilization()));
  EXPECT_TRUE(lost(doomed.decoder_utilization()));
  EXPECT_TRUE(lost(doomed.supported_event_types()));
  EXPECT_TRUE(lost(set->register_events(doomed, kEventTypeXidCriticalError)));
  EXPECT_TRUE(lost(set->wait(0)));
  unsigned count = 0;
  EXPECT_TRUE(lost(session.library()->call(&FunctionTable::DeviceGetRetiredPages, doomed.handle(),
                                           kPageRetirementDoubleBitEcc, &count, nullptr)));
  unsetenv("GPUSCOPE_SIM_TIME_SCALE");
  EXPECT_TRUE(healthy.ecc_mode().has_value());
}

// --- Health faults: the scenario's "health" steps (docs/scenarios.md, "Health faults") ---

// Puts scenario time at_s now, running `scale` scenario seconds per wall second, for the
// sessions opened while it lives (the library reads the variables at each first nvmlInit).
class Timeline {
 public:
  explicit Timeline(double at_s, double scale = 1.0) {
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    const long long epoch = now - std::llround(at_s / scale * 1e9);
    setenv("GPUSCOPE_SIM_EPOCH_NS", std::to_string(epoch).c_str(), 1);
    setenv("GPUSCOPE_SIM_TIME_SCALE", std::to_string(scale).c_str(), 1);
    start_ = std::chrono::steady_clock::now();
  }
  ~Timeline() {
    unsetenv("GPUSCOPE_SIM_EPOCH_NS");
    unsetenv("GPUSCOPE_SIM_TIME_SCALE");
  }
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  // Wall time since scenario time was at_s.
  std::chrono::steady_clock::duration elapsed() const {
    return std::chrono::steady_clock::now() - start_;
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Writes a scenario into the environment's folder and points the library at it.
std::string write_scenario(const SimEnvironment& env, const std::string& text) {
  const std::string path = env.dir() + "/scenario.json";
  std::ofstream(path) << text;
  setenv("GPUSCOPE_SIM_SCENARIO", path.c_str(), 1);
  return path;
}

// GPU 0: an A100 with every kind of step (and lifetime ECC counts from before); GPU 1: a V100,
// whose ECC errors retire pages; GPU 2: an H100 PCIe card (no NVLink) with an Xid.
constexpr const char* kStepsScenario = R"({
  "name": "health-steps", "seed": 5,
  "phases": [{"name": "compute", "duration_s": 100, "util": 100, "sm_active": 90,
              "nvlink_tx_mibps": 1000, "nvlink_rx_mibps": 500}],
  "gpus": [
    {"model": "A100-SXM4-80GB", "ecc_aggregate_start": {"corrected": 7, "uncorrected": 2},
     "faults": {"health": [
       {"at_s": 2, "xid": 13},
       {"at_s": 3, "ecc_corrected": 5},
       {"at_s": 3.5, "ecc_uncorrected": 1},
       {"at_s": 4, "remapped_correctable": 1, "remapped_uncorrectable": 1, "remap_pending": true},
       {"at_s": 6, "remap_failure": true},
       {"at_s": 1, "pcie_replays": 40},
       {"at_s": 5, "pcie_replays": 2},
       {"at_s": 2, "nvlink_replay_errors": 3, "nvlink_crc_flit_errors": 1}]}},
    {"model": "V100-SXM2-32GB", "faults": {"health": [
       {"at_s": 5, "retired_sbe": 2, "retired_dbe": 1, "retired_pending": true}]}},
    {"model": "H100-SXM5-80GB", "name": "NVIDIA H100 PCIe", "nvlink": false,
     "faults": {"health": [{"at_s": 2.5, "xid": 31}]}}
  ]
})";

// What GPU 0 of kStepsScenario must report at a time.
struct CountersAt {
  double at_s;
  unsigned long long ecc_corrected, ecc_uncorrected;  // volatile
  unsigned remapped_correctable, remapped_uncorrectable;
  bool pending, failure;
  unsigned pcie_replays;
  unsigned long long nvlink_replay, nvlink_crc_flit;
};

nvmlFieldValue_t field(const Device& device, unsigned id, unsigned scope = 0) {
  nvmlFieldValue_t value{};
  value.fieldId = id;
  value.scopeId = scope;
  EXPECT_TRUE(device.field_values({&value, 1}).has_value());
  return value;
}

// The field's value, or -1 when it is not supported.
double field_number(const Device& device, unsigned id, unsigned scope = 0) {
  return field_as_double(field(device, id, scope)).value_or(-1);
}

void expect_counters(const Device& gpu, const CountersAt& want) {
  SCOPED_TRACE("at " + std::to_string(want.at_s) + " s");
  EXPECT_EQ(*gpu.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile),
            want.ecc_corrected);
  EXPECT_EQ(*gpu.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile),
            want.ecc_uncorrected);
  EXPECT_EQ(*gpu.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate),
            7 + want.ecc_corrected);
  EXPECT_EQ(*gpu.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate),
            2 + want.ecc_uncorrected);
  const auto rows = gpu.remapped_rows();
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->corrected, want.remapped_correctable);
  EXPECT_EQ(rows->uncorrected, want.remapped_uncorrectable);
  EXPECT_EQ(rows->pending, want.pending);
  EXPECT_EQ(rows->failure, want.failure);
  EXPECT_EQ(*gpu.pcie_replay_counter(), want.pcie_replays);
  // The same counters through nvmlDeviceGetFieldValues.
  EXPECT_EQ(field_number(gpu, 1), 1);
  EXPECT_EQ(field_number(gpu, 3), want.ecc_corrected);
  EXPECT_EQ(field_number(gpu, 4), want.ecc_uncorrected);
  EXPECT_EQ(field_number(gpu, 5), 7 + want.ecc_corrected);
  EXPECT_EQ(field_number(gpu, 6), 2 + want.ecc_uncorrected);
  EXPECT_EQ(field_number(gpu, 94), want.pcie_replays);
  EXPECT_EQ(field_number(gpu, 142), want.remapped_correctable);
  EXPECT_EQ(field_number(gpu, 143), want.remapped_uncorrectable);
  EXPECT_EQ(field_number(gpu, 144), want.pending ? 1 : 0);
  EXPECT_EQ(field_number(gpu, 145), want.failure ? 1 : 0);
  EXPECT_EQ(field_number(gpu, 52), want.nvlink_replay);
  EXPECT_EQ(field_number(gpu, 38), want.nvlink_crc_flit);
  EXPECT_EQ(field_number(gpu, 59), 0);
}

TEST(NvmlHealthFaults, EachCounterRisesAtItsStep) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  write_scenario(env, kStepsScenario);
  // Each time falls 0.05 s after a step and at least 0.4 s before the next: the previous row
  // is the "before" of each step.
  const std::vector<CountersAt> timeline = {
      {0.6, 0, 0, 0, 0, false, false, 0, 0, 0},   {1.05, 0, 0, 0, 0, false, false, 40, 0, 0},
      {2.05, 0, 0, 0, 0, false, false, 40, 3, 1}, {3.05, 5, 0, 0, 0, false, false, 40, 3, 1},
      {3.55, 5, 1, 0, 0, false, false, 40, 3, 1}, {4.05, 5, 1, 1, 1, true, false, 40, 3, 1},
      {5.05, 5, 1, 1, 1, true, false, 42, 3, 1},  {6.05, 5, 1, 1, 1, true, true, 42, 3, 1},
      {60, 5, 1, 1, 1, true, true, 42, 3, 1},
  };
  for (const CountersAt& want : timeline) {
    Timeline at(want.at_s);
    Session session(sim());
    expect_counters(session.device(0), want);
  }
}

TEST(NvmlHealthFaults, PagesRetireBeforeAmpereAndRowsRemapAfter) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  write_scenario(env, kStepsScenario);
  for (const double at_s : {4.6, 5.05}) {
    SCOPED_TRACE("at " + std::to_string(at_s) + " s");
    Timeline at(at_s);
    Session session(sim());
    Device v100 = session.device(1);
    const unsigned sbe = at_s > 5 ? 2 : 0;
    const unsigned dbe = at_s > 5 ? 1 : 0;
    unsigned count = 0;
    auto sized = session.library()->call(&FunctionTable::DeviceGetRetiredPages, v100.handle(),
                                         kPageRetirementMultipleSingleBitEcc, &count, nullptr);
    // Asking with no room says how many there are.
    if (sbe > 0) {
      ASSERT_FALSE(sized.has_value());
      EXPECT_EQ(sized.error().code, kErrorInsufficientSize);
    }
    EXPECT_EQ(count, sbe);
    std::vector<unsigned long long> addresses(4);
    count = 4;
    ASSERT_TRUE(session.library()
                    ->call(&FunctionTable::DeviceGetRetiredPages, v100.handle(),
                           kPageRetirementDoubleBitEcc, &count, addresses.data())
                    .has_value());
    EXPECT_EQ(count, dbe);
    EXPECT_EQ(field_number(v100, 29), sbe);
    EXPECT_EQ(field_number(v100, 30), dbe);
    EXPECT_EQ(field_number(v100, 31), at_s > 5 ? 1 : 0);
    ASSERT_FALSE(v100.remapped_rows().has_value());
    EXPECT_EQ(v100.remapped_rows().error().code, kErrorNotSupported);
    EXPECT_EQ(field_number(v100, 142), -1);
    // The A100 remaps rows: no retired pages there.
    EXPECT_FALSE(session.library()
                     ->call(&FunctionTable::DeviceGetRetiredPages, session.device(0).handle(),
                            kPageRetirementDoubleBitEcc, &count, nullptr)
                     .has_value());
    EXPECT_EQ(field_number(session.device(0), 29), -1);
  }
}

TEST(NvmlHealthFaults, NvlinkFieldsOnlyWhereTheModelHasNvlink) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  write_scenario(env, kStepsScenario);
  Timeline at(3);
  Session session(sim());
  Device a100 = session.device(0);
  constexpr unsigned kAllLinks = std::numeric_limits<unsigned>::max();
  const double tx = field_number(a100, 138, kAllLinks);
  const double rx = field_number(a100, 139, kAllLinks);
  // 1000 and 500 MiB/s for about 3 s (noisy buckets), in KiB.
  EXPECT_NEAR(tx, 3 * 1000 * 1024, 0.1 * 3 * 1000 * 1024);
  EXPECT_NEAR(rx, 3 * 500 * 1024, 0.1 * 3 * 500 * 1024);
  EXPECT_NEAR(field_number(a100, 138, 0), tx / 12, tx / 12 * 0.05);  // one of 12 links
  EXPECT_EQ(field(a100, 138, 12).nvmlReturn, kErrorInvalidArgument);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GT(field_number(a100, 138, kAllLinks), tx);  // a counter: it grows
  Device pcie_card = session.device(2);
  for (const unsigned id : {38U, 45U, 52U, 59U, 138U, 139U}) {
    EXPECT_EQ(field(pcie_card, id, kAllLinks).nvmlReturn, kErrorNotSupported) << "field " << id;
  }
}

TEST(NvmlHealthFaults, ViolationTimesFollowThePowerCapAndIdleTime) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  write_scenario(env, R"({"name": "capped", "seed": 9,
    "phases": [{"name": "idle", "duration_s": 1},
               {"name": "compute", "duration_s": 100, "util": 100, "sm_active": 95,
                "tensor": 80, "dram": 60}],
    "gpus": [{"model": "A100-SXM4-80GB", "power": {"default_w": 200}}]})");
  for (const double scale : {1.0, 10.0}) {
    SCOPED_TRACE("time scale " + std::to_string(scale));
    Timeline at(3.05, scale);
    Session session(sim());
    Device gpu = session.device(0);
    ASSERT_NE(*gpu.clock_event_reasons() & kClocksEventSwPowerCap, 0U);
    // Wall nanoseconds, like the energy counter: scenario time / scale. Capped since 1 s (the
    // query comes some milliseconds of wall time after 3.05 s), idle before.
    const double capped = field_number(gpu, 74);
    EXPECT_GE(capped, 2.05e9 / scale - 1e6);
    EXPECT_LE(capped, 2.05e9 / scale + 0.1e9);
    EXPECT_NEAR(field_number(gpu, 78), 1.0e9 / scale, 1e6);
    for (const unsigned id : {75U, 76U, 77U, 79U, 80U, 81U, 269U, 270U, 271U}) {
      EXPECT_EQ(field_number(gpu, id), 0) << "field " << id;
    }
  }
}

// The events one set delivers, waiting up to timeout_ms each, until a wait times out.
std::vector<Event> drain(EventSet& set, unsigned timeout_ms) {
  std::vector<Event> events;
  for (;;) {
    auto next = set.wait(timeout_ms);
    EXPECT_TRUE(next.has_value());
    if (!next || !next->has_value()) return events;
    events.push_back(**next);
  }
}

TEST(NvmlHealthFaults, EventsArriveInTimeOrderForRegisteredTypesOnly) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  write_scenario(env, kStepsScenario);
  constexpr double kStart = 1;
  constexpr double kScale = 10;  // 5 scenario seconds in 500 ms
  Timeline at(kStart, kScale);
  Session session(sim());
  Device a100 = session.device(0);
  Device pcie_card = session.device(2);
  auto set = EventSet::create(session.library());
  ASSERT_TRUE(set.has_value());
  ASSERT_TRUE(set->register_events(a100, kEventTypeXidCriticalError | kEventTypeDoubleBitEccError |
                                             kEventTypeDramRetirementFailure)
                  .has_value());
  ASSERT_TRUE(set->register_events(pcie_card, kEventTypeXidCriticalError).has_value());
  struct Want {
    double at_s;
    nvmlDevice_t device;
    std::uint64_t type, data;
  };
  // Not the corrected ECC error (3 s) nor the remap (4 s): those types are not registered.
  const std::vector<Want> wanted = {{2, a100.handle(), kEventTypeXidCriticalError, 13},
                                    {2.5, pcie_card.handle(), kEventTypeXidCriticalError, 31},
                                    {3.5, a100.handle(), kEventTypeDoubleBitEccError, 0},
                                    {6, a100.handle(), kEventTypeDramRetirementFailure, 0}};
  for (const Want& want : wanted) {
    auto event = set->wait(2000);
    ASSERT_TRUE(event.has_value());
    ASSERT_TRUE(event->has_value()) << "no event for t = " << want.at_s;
    EXPECT_EQ((*event)->device, want.device);
    EXPECT_EQ((*event)->type, want.type);
    EXPECT_EQ((*event)->data, want.data);
    EXPECT_FALSE((*event)->gpu_instance_id.has_value());
    EXPECT_FALSE((*event)->compute_instance_id.has_value());
    // Never before its time.
    const auto due = std::chrono::duration<double>((want.at_s - kStart) / kScale);
    EXPECT_GE(at.elapsed(), due - std::chrono::milliseconds(2)) << "t = " << want.at_s;
  }
  // Each wait ended when its event fell due (6 s is 500 ms in), not at its 2 s timeout.
  EXPECT_LT(at.elapsed(), std::chrono::milliseconds(1500));
  EXPECT_TRUE(drain(*set, 0).empty());
}

TEST(NvmlHealthFaults, EventsBeforeRegistrationAreNotRecorded) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  write_scenario(env, kStepsScenario);
  Timeline at(3.1, 5);
  Session session(sim());
  auto set = EventSet::create(session.library());
  ASSERT_TRUE(set.has_value());
  ASSERT_TRUE(set->register_events(session.device(0), kEventTypeXidCriticalError |
                                                          kEventTypeSingleBitEccError |
                                                          kEventTypeDoubleBitEccError)
                  .has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // to t = 3.85
  // The Xid at 2 s and the corrected error at 3 s came before the registration.
  const std::vector<Event> events = drain(*set, 0);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].type, kEventTypeDoubleBitEccError);
}

TEST(NvmlHealthFaults, TimeoutZeroNeverSleepsAndLongerWaitsEndWhenAnEventIsDue) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  write_scenario(env, kStepsScenario);
  Timeline at(1.6);
  Session session(sim());
  auto set = EventSet::create(session.library());
  ASSERT_TRUE(set.has_value());
  ASSERT_TRUE(set->register_events(session.device(0), kEventTypeXidCriticalError).has_value());
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    auto nothing = set->wait(0);
    ASSERT_TRUE(nothing.has_value());
    EXPECT_FALSE(nothing->has_value());
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  // The Xid falls due at 2 s, some 0.4 s from now: a 5 s wait ends then, not at its timeout.
  start = std::chrono::steady_clock::now();
  auto xid = set->wait(5000);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(xid.has_value() && xid->has_value());
  EXPECT_EQ((*xid)->data, 13U);
  EXPECT_GE(at.elapsed(), std::chrono::milliseconds(395));
  EXPECT_LT(waited, std::chrono::milliseconds(2000));
}

TEST(NvmlHealthFaults, AnEventAlreadyDueIsReturnedAtOnce) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  write_scenario(env, kStepsScenario);
  Timeline at(1.5, 10);
  Session session(sim());
  auto set = EventSet::create(session.library());
  ASSERT_TRUE(set.has_value());
  ASSERT_TRUE(set->register_events(session.device(0), kEventTypeXidCriticalError).has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // to t = 2.5
  const auto start = std::chrono::steady_clock::now();
  auto xid = set->wait(0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
  ASSERT_TRUE(xid.has_value() && xid->has_value());
  EXPECT_EQ((*xid)->data, 13U);
}

TEST(NvmlHealthFaults, MigDevicesReportTheirGpusCountersButNoRemapsOrEvents) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  write_scenario(env, R"({"name": "mig-health",
    "phases": [{"name": "idle", "duration_s": 1}],
    "gpus": [{"model": "H100-SXM5-80GB",
              "mig_devices": ["MIG-5e2a0c17-3b9d-5f4e-8a61-2c7d9e0b4f18"],
              "faults": {"health": [{"at_s": 0, "ecc_corrected": 4, "pcie_replays": 6}]}}]})");
  Session session(sim());
  Device gpu = session.device(0);
  nvmlDevice_t mig_handle = nullptr;
  ASSERT_TRUE(session.library()
                  ->call(&FunctionTable::DeviceGetHandleByUUID,
                         "MIG-5e2a0c17-3b9d-5f4e-8a61-2c7d9e0b4f18", &mig_handle)
                  .has_value());
  Device mig(session.library(), mig_handle, 0);
  EXPECT_EQ(*mig.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile), 4U);
  EXPECT_EQ(*gpu.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile), 4U);
  EXPECT_EQ(*mig.pcie_replay_counter(), 6U);
  // Remapped rows: NOT_SUPPORTED with MIG instances, on the GPU as on its MIG devices (nvml.h).
  for (const Device* device : {&gpu, &mig}) {
    ASSERT_FALSE(device->remapped_rows().has_value());
    EXPECT_EQ(device->remapped_rows().error().code, kErrorNotSupported);
  }
  EXPECT_EQ(field(gpu, 142).nvmlReturn, kErrorNotSupported);
  auto set = EventSet::create(session.library());
  ASSERT_TRUE(set.has_value());
  auto refused = set->register_events(mig, kEventTypeXidCriticalError);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, kErrorNotSupported);
}

TEST(NvmlHealthFaults, GlobalStepsApplyToEveryGpuBesideItsOwn) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  write_scenario(env, R"({"name": "merged", "phases": [{"name": "idle", "duration_s": 1}],
    "faults": {"health": [{"at_s": 0, "pcie_replays": 1}]},
    "gpus": [{"model": "H100-SXM5-80GB"},
             {"model": "H100-SXM5-80GB",
              "faults": {"health": [{"at_s": 0, "pcie_replays": 2}]}}]})");
  Session session(sim());
  EXPECT_EQ(*session.device(0).pcie_replay_counter(), 1U);
  EXPECT_EQ(*session.device(1).pcie_replay_counter(), 3U);
}

TEST(NvmlHealthFaults, XidSeventyNineComesBeforeTheLoss) {
  SimEnvironment env(SimEnvironment::fixture("health-xid-lost"));
  Timeline at(3.5, 5);
  Session session(sim());
  Device gpu = session.device(0);
  auto set = EventSet::create(session.library());
  ASSERT_TRUE(set.has_value());
  ASSERT_TRUE(set->register_events(gpu, kEventTypeXidCriticalError).has_value());
  auto xid = set->wait(3000);
  ASSERT_TRUE(xid.has_value() && xid->has_value());
  EXPECT_LT(at.elapsed(), std::chrono::milliseconds(1500));  // due 100 ms in
  EXPECT_EQ((*xid)->data, 79U);
  EXPECT_EQ((*xid)->device, gpu.handle());
  // Then the GPU falls off the bus at 4.2 s (40 ms later): the wait ends with GPU_IS_LOST.
  const auto start = std::chrono::steady_clock::now();
  auto lost = set->wait(3000);
  ASSERT_FALSE(lost.has_value());
  EXPECT_EQ(lost.error().code, kErrorGpuIsLost);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
  ASSERT_FALSE(gpu.pcie_replay_counter().has_value());
  EXPECT_EQ(gpu.pcie_replay_counter().error().code, kErrorGpuIsLost);
}

TEST(NvmlHealthFaults, TheShippedFaultsFixtureDegradesGpuOneOnly) {
  SimEnvironment env(SimEnvironment::fixture("health-faults"));
  Timeline at(0, 50);  // 12 scenario seconds in 240 ms
  Session session(sim());
  auto set = EventSet::create(session.library());
  ASSERT_TRUE(set.has_value());
  for (unsigned i = 0; i < 2; ++i) {
    ASSERT_TRUE(set->register_events(session.device(i), kEventTypeXidCriticalError |
                                                            kEventTypeDoubleBitEccError |
                                                            kEventTypeDramRetirementEvent)
                    .has_value());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  const std::vector<Event> events = drain(*set, 0);
  const std::vector<std::uint64_t> types = {kEventTypeXidCriticalError, kEventTypeDoubleBitEccError,
                                            kEventTypeXidCriticalError,
                                            kEventTypeDramRetirementEvent};
  ASSERT_EQ(events.size(), types.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].device, session.device(1).handle());
    EXPECT_EQ(events[i].type, types[i]);
  }
  EXPECT_EQ(events[0].data, 48U);
  EXPECT_EQ(events[2].data, 63U);
  Device healthy = session.device(0);
  Device sick = session.device(1);
  EXPECT_EQ(*healthy.pcie_replay_counter(), 0U);
  EXPECT_EQ(*healthy.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate), 0U);
  EXPECT_FALSE(healthy.remapped_rows()->pending);
  EXPECT_GT(*sick.pcie_replay_counter(), 0U);
  EXPECT_GT(*sick.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile), 0U);
  EXPECT_GT(*sick.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate),
            *sick.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile));
  EXPECT_EQ(*sick.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile), 1U);
  EXPECT_TRUE(sick.remapped_rows()->pending);
}

// Writes a scenario whose GPU 0 (or top level) has the faults given, and returns the error
// nvmlInit reports for it.
std::string init_error(const SimEnvironment& env, const std::string& faults, bool per_gpu) {
  const std::string gpu =
      per_gpu ? R"({"model": "H100-SXM5-80GB", )" + faults + "}" : R"({"model": "H100-SXM5-80GB"})";
  write_scenario(env, R"({"name": "bad-health", "phases": [{"name": "idle", "duration_s": 1}],)" +
                          (per_gpu ? std::string() : faults + ",") + R"("gpus": [)" + gpu + "]}");
  try {
    Session session(sim());
  } catch (const Error& e) {
    return e.what();
  }
  return "(nvmlInit succeeded)";
}

TEST(NvmlHealthFaults, BadStepsAreRefusedWithTheirJsonPointer) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"at_s": 1, "xid": 0})", "/faults/health/0/xid: an Xid is a number from 1 to 999"},
      {R"({"at_s": 1, "xid": 1000})", "/faults/health/0/xid: 1000 is out of range"},
      {R"({"at_s": 1, "ecc_corected": 1})",
       R"(/faults/health/0: unknown key "ecc_corected" (did you mean "ecc_corrected"?))"},
      {R"({"xid": 13})", R"(/faults/health/0: missing required key "at_s")"},
      {R"({"at_s": -1, "xid": 13})", "/faults/health/0/at_s: -1 is out of range"},
      {R"({"at_s": 1, "pcie_replays": 1.5})",
       "/faults/health/0/pcie_replays: expected a non-negative integer"},
      {R"({"at_s": 1, "remap_pending": 1})",
       "/faults/health/0/remap_pending: expected true or false"},
      {R"({"at_s": 1, "ecc_corrected": 0})",
       "/faults/health/0: a health step needs something besides at_s"},
  };
  for (const auto& [step, message] : cases) {
    const std::string text = init_error(env, R"("faults": {"health": [)" + step + "]}", false);
    EXPECT_NE(text.find(message), std::string::npos) << step << "\n" << text;
  }
  std::string text = init_error(env, R"("faults": {"health": {"at_s": 1}})", false);
  EXPECT_NE(text.find("/faults/health: expected an array of health steps"), std::string::npos)
      << text;
  text = init_error(env, R"("faults": {"health": [{"at_s": 1, "xid": 13}, {"at_s": 2}]})", true);
  EXPECT_NE(text.find("/gpus/0/faults/health/1: a health step needs"), std::string::npos) << text;
  text = init_error(env, R"("ecc_aggregate_start": {"corected": 1})", true);
  EXPECT_NE(text.find(R"(/gpus/0/ecc_aggregate_start: unknown key "corected")"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace gpuscope::nvml
