// The health watch (collect/health_watch.hpp): which changes between two reads become events,
// and how the driver's events are put into words.
#include <gtest/gtest.h>

#include "collect/health_watch.hpp"

namespace gpuscope::collect {
namespace {

HealthRow row(std::initializer_list<std::pair<HealthMetric, double>> values) {
  HealthRow r;
  r.device_index = 1;
  for (const auto& [metric, value] : values) r.set(metric, value);
  return r;
}

std::vector<std::string> details(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(std::string(e.kind.text()) + ": " + e.detail);
  return out;
}

TEST(HealthChanges, RisingCountersBecomeEvents) {
  using M = HealthMetric;
  const HealthRow before = row({{M::EccCorrectedVolatile, 2},
                                {M::EccUncorrectedVolatile, 0},
                                {M::PcieReplays, 10},
                                {M::RemappedRowsCorrectable, 0},
                                {M::RemappedRowsUncorrectable, 0},
                                {M::RowRemapPending, 0}});
  const HealthRow after = row({{M::EccCorrectedVolatile, 7},
                               {M::EccUncorrectedVolatile, 1},
                               {M::PcieReplays, 50},
                               {M::RemappedRowsCorrectable, 0},
                               {M::RemappedRowsUncorrectable, 1},
                               {M::RowRemapPending, 1}});
  const auto events = health_changes(&before, after);
  EXPECT_EQ(details(events), (std::vector<std::string>{
                                 "ecc: 5 corrected ECC errors (total 7)",
                                 "ecc: 1 uncorrected ECC error (total 1)",
                                 "row_remap: 1 memory row remapped",
                                 "row_remap: a row remap is pending: the GPU needs a reset",
                                 "pcie_replays: 40 PCIe replays (total 50)",
                             }));
  for (const auto& e : events) EXPECT_EQ(e.device_index, 1u);
}

TEST(HealthChanges, NothingNewIsQuiet) {
  using M = HealthMetric;
  const HealthRow r =
      row({{M::EccCorrectedVolatile, 2}, {M::PcieReplays, 1}, {M::RowRemapPending, 1}});
  EXPECT_TRUE(health_changes(&r, r).empty());
}

TEST(HealthChanges, TheFirstReadReportsWhatWasAlreadyWrongOnly) {
  using M = HealthMetric;
  // Lifetime counts are history, not news; a pending remap is a GPU not to be trusted now.
  const HealthRow first = row({{M::EccCorrectedAggregate, 120},
                               {M::PcieReplays, 3},
                               {M::RowRemapPending, 1},
                               {M::RowRemapFailure, 0}});
  EXPECT_EQ(details(health_changes(nullptr, first)),
            (std::vector<std::string>{"row_remap: a row remap is pending (already when the run "
                                      "began): the GPU needs a reset"}));
}

TEST(HealthChanges, AggregateCountsServeWhenVolatileOnesAreAbsent) {
  using M = HealthMetric;
  const HealthRow before = row({{M::EccUncorrectedAggregate, 4}});
  const auto events = health_changes(&before, row({{M::EccUncorrectedAggregate, 6}}));
  EXPECT_EQ(details(events), (std::vector<std::string>{"ecc: 2 uncorrected ECC errors (total 6)"}));
}

TEST(HealthChanges, NvlinkErrorsAddUp) {
  using M = HealthMetric;
  const HealthRow before = row({{M::NvlinkCrcFlitErrors, 0}, {M::NvlinkReplayErrors, 0}});
  const auto events =
      health_changes(&before, row({{M::NvlinkCrcFlitErrors, 3}, {M::NvlinkReplayErrors, 1}}));
  EXPECT_EQ(details(events),
            (std::vector<std::string>{"nvlink_errors: 4 NVLink errors (CRC, replay or recovery)"}));
}

TEST(DriverEvents, XidsCarryTheirNumber) {
  nvml::Event xid{nullptr, nvml::kEventTypeXidCriticalError, 48, std::nullopt, std::nullopt};
  const Event e = describe_driver_event(xid, 3);
  EXPECT_EQ(e.kind, EventKind::Xid);
  EXPECT_TRUE(e.detail.starts_with("Xid 48")) << e.detail;
  EXPECT_EQ(e.device_index, 3u);
  EXPECT_GT(e.mono_ns, 0);
}

TEST(DriverEvents, MigInstancesAreNamed) {
  nvml::Event xid{nullptr, nvml::kEventTypeXidCriticalError, 13, 2u, 0u};
  const Event e = describe_driver_event(xid, 0);
  EXPECT_NE(e.detail.find("(GPU instance 2, compute instance 0)"), std::string::npos) << e.detail;
}

TEST(DriverEvents, OtherFaultTypes) {
  const auto kind_of = [](std::uint64_t type) {
    return describe_driver_event({nullptr, type, 0, std::nullopt, std::nullopt}, 0).kind;
  };
  EXPECT_EQ(kind_of(nvml::kEventTypeDoubleBitEccError), EventKind::Ecc);
  EXPECT_EQ(kind_of(nvml::kEventTypeDramRetirementFailure), EventKind::RowRemap);
  EXPECT_EQ(kind_of(nvml::kEventTypeGpuUnavailableError), EventKind::GpuLost);
  const Event recovery = describe_driver_event(
      {nullptr, nvml::kEventTypeGpuRecoveryAction, 2, std::nullopt, std::nullopt}, 0);
  EXPECT_EQ(recovery.kind, EventKind::Xid);
  EXPECT_NE(recovery.detail.find("reboot the node"), std::string::npos) << recovery.detail;
  // The registered mask holds no clock or P-state events: they flood under a power cap.
  EXPECT_EQ(kFaultEventTypes & (nvml::kEventTypeClock | nvml::kEventTypePState), 0u);
}

}  // namespace
}  // namespace gpuscope::collect
