// Health calls (issue 29) through the real loader against the simulated driver.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <thread>

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

}  // namespace
}  // namespace gpuscope::nvml
