// The health findings (analyze/health.hpp) over hand-made health data: whose fault each signal
// points to, the thresholds, and the "job ended N s after" clause.
#include "analyze/health.hpp"

#include <gtest/gtest.h>

#include "analyze/findings.hpp"

namespace gpuscope::analyze {
namespace {

GpuHealth gpu_health(const std::string& gpu, double first_s, double last_s) {
  GpuHealth g;
  g.gpu = gpu;
  g.first_t_s = first_s;
  g.last_t_s = last_s;
  return g;
}

void set(GpuHealth& g, HealthMetric m, double first, double last) {
  g.first[static_cast<std::size_t>(m)] = first;
  g.last[static_cast<std::size_t>(m)] = last;
}

const Finding* find(const std::vector<Finding>& findings, std::string_view kind) {
  for (const auto& f : findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

TEST(HealthFindings, XidNamesItsCauseAndTheJobsEnd) {
  Analysis a;
  a.health.events.push_back(
      {"GPU 3", 41.2, EventKind::Xid, "Xid 79: GPU has fallen off the bus", 42.4});
  const auto findings = health_findings(a);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, "xid");
  EXPECT_NE(findings[0].text.find("GPU 3: Xid 79"), std::string::npos) << findings[0].text;
  EXPECT_NE(findings[0].text.find("at 41.2 s"), std::string::npos) << findings[0].text;
  EXPECT_NE(findings[0].text.find("1.2 s before the job ended"), std::string::npos)
      << findings[0].text;
  EXPECT_NE(findings[0].text.find("hardware"), std::string::npos) << findings[0].text;
}

TEST(HealthFindings, ApplicationXidsSayTheApplication) {
  Analysis a;
  a.health.events.push_back({"GPU 0", 5, EventKind::Xid, "Xid 13", std::nullopt});
  a.health.events.push_back({"GPU 0", 6, EventKind::Xid, "Xid 13", std::nullopt});
  a.health.events.push_back({"GPU 0", 7, EventKind::Xid, "Xid 31", std::nullopt});
  const auto findings = health_findings(a);
  ASSERT_EQ(findings.size(), 2u);  // one per Xid number, with its count
  EXPECT_NE(findings[0].text.find("(2 times)"), std::string::npos) << findings[0].text;
  EXPECT_NE(findings[0].text.find("application"), std::string::npos) << findings[0].text;
  EXPECT_EQ(findings[0].text.find("before the job ended"), std::string::npos);  // end unknown
  EXPECT_NE(findings[1].text.find("Xid 31"), std::string::npos);
}

TEST(HealthFindings, UnknownXidSendsToTheKernelLog) {
  Analysis a;
  a.health.events.push_back({"GPU 0", 5, EventKind::Xid, "Xid 9999", std::nullopt});
  const auto findings = health_findings(a);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].text.find("not in NVIDIA's Xid catalogue"), std::string::npos);
}

TEST(HealthFindings, LostGpuWithoutXidIsStillHardware) {
  Analysis a;
  a.lost_gpus.push_back({"GPU 1", 8.0});
  auto findings = health_findings(a);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, "gpu_lost");
  EXPECT_NE(findings[0].text.find("not your code"), std::string::npos);
  // With Xid 79 recorded on that GPU, the Xid's finding says it once.
  a.health.events.push_back({"GPU 1", 7.9, EventKind::Xid, "Xid 79", std::nullopt});
  findings = health_findings(a);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, "xid");
}

TEST(HealthFindings, MemoryFaults) {
  Analysis a;
  GpuHealth g = gpu_health("GPU 1", 0, 10);
  set(g, HealthMetric::EccUncorrectedVolatile, 0, 1);
  set(g, HealthMetric::EccCorrectedVolatile, 2, 7);
  set(g, HealthMetric::RowRemapPending, 0, 1);
  set(g, HealthMetric::RowRemapFailure, 0, 0);
  a.health.gpus.push_back(g);
  a.health.events.push_back(
      {"GPU 1", 3.5, EventKind::Ecc, "1 uncorrected ECC error (total 1)", {}});
  const auto findings = health_findings(a);
  const Finding* dbe = find(findings, "ecc_uncorrected");
  ASSERT_NE(dbe, nullptr);
  EXPECT_NE(dbe->text.find("1 uncorrected ECC error during the run (first at 3.5 s)"),
            std::string::npos)
      << dbe->text;
  const Finding* sbe = find(findings, "ecc_corrected");
  ASSERT_NE(sbe, nullptr);
  EXPECT_NE(sbe->text.find("5 corrected ECC errors"), std::string::npos) << sbe->text;
  ASSERT_NE(find(findings, "row_remap_pending"), nullptr);
  EXPECT_EQ(find(findings, "row_remap_failure"), nullptr);  // 0 is not a failure
  // The uncorrected error outranks the corrected ones.
  EXPECT_LT(dbe, sbe);
}

TEST(HealthFindings, PcieReplaysOnlyAboveDcgmsRate) {
  Analysis a;
  GpuHealth slow = gpu_health("GPU 0", 0, 600);
  set(slow, HealthMetric::PcieReplays, 1, 40);  // 3.9 a minute: below 8
  GpuHealth fast = gpu_health("GPU 1", 0, 60);
  set(fast, HealthMetric::PcieReplays, 0, 120);  // 120 a minute
  a.health.gpus = {slow, fast};
  const auto findings = health_findings(a);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, "pcie_replays");
  EXPECT_NE(findings[0].text.find("GPU 1: 120 PCIe replays"), std::string::npos)
      << findings[0].text;
  EXPECT_NE(findings[0].text.find("120 a minute"), std::string::npos) << findings[0].text;
}

TEST(HealthFindings, NvlinkAndHardwareSlowdowns) {
  Analysis a;
  GpuHealth g = gpu_health("GPU 2", 0, 100);
  set(g, HealthMetric::NvlinkReplayErrors, 0, 1);
  set(g, HealthMetric::NvlinkCrcFlitErrors, 0, 50);  // 0.5/s: CRC alone would not count
  set(g, HealthMetric::ViolationHwThermalNs, 0, 2.5e9);
  set(g, HealthMetric::ViolationPowerBrakeNs, 0, 0.5e9);  // under a second: no finding
  a.health.gpus.push_back(g);
  const auto findings = health_findings(a);
  const Finding* nvlink = find(findings, "nvlink_errors");
  ASSERT_NE(nvlink, nullptr);
  EXPECT_NE(nvlink->text.find("51 NVLink errors"), std::string::npos) << nvlink->text;
  const Finding* thermal = find(findings, "hw_thermal_slowdown");
  ASSERT_NE(thermal, nullptr);
  EXPECT_NE(thermal->text.find("2.5 s"), std::string::npos);
  EXPECT_EQ(find(findings, "power_brake"), nullptr);
}

TEST(HealthFindings, HealthyGpusSayNothingAndComeFirstInTheDiagnosis) {
  Analysis a;
  GpuHealth g = gpu_health("GPU 0", 0, 100);
  set(g, HealthMetric::EccCorrectedVolatile, 0, 0);
  set(g, HealthMetric::PcieReplays, 1, 1);
  a.health.gpus.push_back(g);
  EXPECT_TRUE(health_findings(a).empty());
  a.health.events.push_back({"GPU 0", 5, EventKind::Xid, "Xid 48", std::nullopt});
  const auto findings = diagnose(a);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().kind, "xid");
}

}  // namespace
}  // namespace gpuscope::analyze
