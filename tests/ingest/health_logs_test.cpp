// The GPU health fields of the three log formats (docs/logs.md) into health_samples rows and Xid
// events: the fixtures of tests/fixtures/logs (make_smi_csv_fixtures.py,
// make_health_log_fixtures.py, whose rules these tests recompute) and the real H200 logs,
// imported into a run database and read back with the store's reader.
#include <gtest/gtest.h>

#include "ingest/logs/smi_csv_fields.hpp"
#include "log_import.hpp"

namespace gpuscope::ingest::test {
namespace {

using H = HealthMetric;
constexpr std::int64_t k224011 = 1795646411 * kSecond;  // 2026-11-25 22:40:11 UTC
constexpr std::int64_t k100000 = 1795600800 * kSecond;  // 2026-11-25 10:00:00 UTC

ReadOptions utc() {
  ReadOptions o;
  o.timezone = "UTC";
  return o;
}

ReadOptions started() {
  ReadOptions o = utc();
  o.start = "2026-11-25 22:40:11";
  o.interval_s = 1;
  return o;
}

// Every health row's times are its sample's: the same wall time, mono_ns from the run's start.
void expect_times_of_samples(const Imported& r, unsigned gpu) {
  const auto& samples = r.samples.at(gpu);
  const std::int64_t start = r.runs.at(0).info.start_wall_ns;
  for (const auto& h : r.health_of(gpu)) {
    const bool found = std::any_of(samples.begin(), samples.end(),
                                   [&](const SampleRow& s) { return s.wall_ns == h.wall_ns; });
    EXPECT_TRUE(found) << "GPU " << gpu << " health at " << h.wall_ns;
    EXPECT_EQ(h.mono_ns, h.wall_ns - start);
  }
}

TEST(HealthLogs, SmiCsvFieldsFillHealthRows) {
  const auto r = import_logs({kLogs / "smi-csv-health.csv"}, utc());
  ASSERT_EQ(r.runs.size(), 1U);
  ASSERT_EQ(r.count(0), 10U);
  ASSERT_EQ(r.count(1), 10U);
  ASSERT_EQ(r.health_of(0).size(), 9U) << "tick 7 of GPU 0 has no health value: no row";
  ASSERT_EQ(r.health_of(1).size(), 10U);
  for (std::size_t tick = 0; tick < 10; ++tick) {
    const HealthRow& h = r.health_of(1)[tick];
    const auto t = static_cast<std::int64_t>(tick);
    EXPECT_EQ(h.wall_ns, k100000 + t * kSecond + 3'000'000);
    const double corrected = tick < 3 ? 2.0 : 2.0 + 4.0 * static_cast<double>(tick - 2);
    const double fault = tick >= 6 ? 1.0 : 0.0;
    EXPECT_EQ(h.get(H::EccEnabled), 1.0) << "Enabled";
    EXPECT_EQ(h.get(H::EccCorrectedVolatile), corrected) << tick;
    EXPECT_EQ(h.get(H::EccCorrectedAggregate), 40 + corrected);
    EXPECT_EQ(h.get(H::EccUncorrectedVolatile), fault);
    EXPECT_EQ(h.get(H::EccUncorrectedAggregate), 3 + fault);
    EXPECT_EQ(h.get(H::RemappedRowsCorrectable), 1.0);
    EXPECT_EQ(h.get(H::RemappedRowsUncorrectable), fault);
    EXPECT_EQ(h.get(H::RowRemapPending), fault) << "Yes/No";
    EXPECT_EQ(h.get(H::RowRemapFailure), 0.0);
    EXPECT_EQ(h.get(H::DecoderUtilPct), 12.0);
    if (tick == 4) {
      EXPECT_FALSE(h.get(H::EncoderUtilPct)) << "[N/A] stays absent";
    } else {
      EXPECT_EQ(h.get(H::EncoderUtilPct), 25.0);
    }
    // [N/A] on Hopper, and fields the log does not have, stay absent, never 0.
    EXPECT_FALSE(h.get(H::RetiredPagesSbe));
    EXPECT_FALSE(h.get(H::RetiredPagesDbe));
    EXPECT_FALSE(h.get(H::RetiredPagesPending));
    EXPECT_FALSE(h.get(H::PcieReplays));
    EXPECT_FALSE(h.get(H::ViolationPowerNs));
  }
  EXPECT_EQ(r.health_of(0)[0].get(H::EccCorrectedAggregate), 7.0);
  EXPECT_EQ(r.health_of(0)[0].get(H::RowRemapPending), 0.0);
  EXPECT_EQ(r.health_of(0)[7].wall_ns, k100000 + 8 * kSecond) << "tick 7 skipped";
  expect_times_of_samples(r, 0);
  expect_times_of_samples(r, 1);
  EXPECT_TRUE(
      r.note_has({"retired_pages.sbe has no value", "N/A in 19 rows", "Unknown Error in 1 row"}));
  EXPECT_TRUE(r.note_has({"ecc.mode.current has no value", "Unknown Error in 1 row"}));
  EXPECT_TRUE(r.note_has({"utilization.encoder has no value", "N/A in 1 row"}));
  EXPECT_FALSE(r.note_has({"gpuscope has no column for"})) << "every field is read";
  EXPECT_TRUE(r.events.empty()) << "a rising counter is no event of the reader's";
}

TEST(HealthLogs, SmiCsvHealthValuesAndTheirRefusals) {
  const smi::Field* pending = smi::field_named("remapped_rows.pending");
  const smi::Field* ecc = smi::field_named("ecc.mode.current");
  const smi::Field* encoder = smi::field_named("utilization.encoder");
  const smi::Field* sbe = smi::field_named("retired_pages.sbe");
  ASSERT_TRUE(pending && ecc && encoder && sbe);
  EXPECT_EQ(sbe->role, smi::FieldRole::Health);
  EXPECT_EQ(sbe->health, H::RetiredPagesSbe) << "the old spelling";
  EXPECT_EQ(smi::field_named("retired_pages.double_bit.count")->health, H::RetiredPagesDbe);
  EXPECT_EQ(smi::field_named("remapped_rows.dbe")->health, H::RemappedRowsUncorrectable);
  EXPECT_EQ(smi::field_named("ecc.errors.uncorrected.aggregate.total")->health,
            H::EccUncorrectedAggregate);
  // Per-location counts are no health column.
  EXPECT_EQ(smi::field_named("ecc.errors.corrected.volatile.dram")->role, smi::FieldRole::NoColumn);
  std::optional<smi::Absent> absent;
  EXPECT_EQ(smi::health_value(*ecc, "Enabled", "", absent), 1.0);
  EXPECT_EQ(smi::health_value(*ecc, "Disabled", "", absent), 0.0);
  EXPECT_EQ(smi::health_value(*pending, "Yes", "", absent), 1.0);
  EXPECT_EQ(smi::health_value(*pending, " No", "", absent), 0.0);
  EXPECT_EQ(smi::health_value(*pending, "1", "", absent), 1.0) << "drivers that print 0/1";
  EXPECT_FALSE(smi::health_value(*pending, "2", "", absent)) << "a flag is 0 or 1";
  EXPECT_FALSE(absent);
  EXPECT_EQ(smi::health_value(*encoder, "37 %", "%", absent), 37.0);
  EXPECT_EQ(smi::health_value(*encoder, "37", "", absent), 37.0) << "nounits";
  EXPECT_EQ(smi::health_value(*sbe, "12", "", absent), 12.0);
  EXPECT_FALSE(smi::health_value(*sbe, "1.5", "", absent)) << "a count is whole";
  EXPECT_FALSE(smi::health_value(*sbe, "-1", "", absent));
  EXPECT_FALSE(smi::health_value(*sbe, "12 W", "", absent));
  EXPECT_FALSE(absent);
  EXPECT_FALSE(smi::health_value(*sbe, "[N/A]", "", absent));
  ASSERT_TRUE(absent);
  EXPECT_EQ(absent->why, "N/A");
}

TEST(HealthLogs, AMalformedHealthValueIsAnErrorNamingItsLine) {
  gpuscope::testing::TempDir tmp;
  const auto log = write_text(fs::path(tmp.path()) / "bad.csv",
                              "timestamp, index, remapped_rows.pending\n"
                              "2026/11/25 10:00:00.000, 0, No\n"
                              "2026/11/25 10:00:01.000, 0, Maybe\n");
  const std::string error = import_error({log}, utc());
  EXPECT_NE(error.find("bad.csv:3: 'Maybe' is no value of remapped_rows.pending"),
            std::string::npos)
      << error;
}

TEST(HealthLogs, TheRealH200LogsHealthFields) {
  // smi.csv logs ecc.errors.corrected.volatile.total (0 on the H200) among its fields.
  const auto csv = import_logs({kH200 / "smi.csv"}, utc());
  ASSERT_EQ(csv.health_of(0).size(), csv.count(0));
  for (const auto& h : csv.health_of(0)) {
    EXPECT_EQ(h.get(H::EccCorrectedVolatile), 0.0);
    EXPECT_EQ(h.present.count(), 1U) << "nothing else was logged";
  }
  // smi-dmon.txt (-s pucvmet): enc, dec, sbecc, dbecc, pci; the H200 had 1 PCIe replay.
  const auto dmon = import_logs({kH200 / "smi-dmon.txt"}, utc());
  ASSERT_EQ(dmon.health_of(0).size(), dmon.count(0));
  const HealthRow& first = dmon.health_of(0).front();
  EXPECT_EQ(first.get(H::PcieReplays), 1.0) << "nvidia-smi -q: Replays Since Reset 1";
  EXPECT_EQ(first.get(H::EccCorrectedAggregate), 0.0);
  EXPECT_EQ(first.get(H::EccUncorrectedAggregate), 0.0);
  EXPECT_EQ(first.get(H::EncoderUtilPct), 0.0);
  EXPECT_EQ(first.get(H::DecoderUtilPct), 0.0);
  EXPECT_EQ(first.present.count(), 5U);
  EXPECT_TRUE(dmon.note_has({"no column", "pviol", "tviol", "bar1"}));
  EXPECT_FALSE(dmon.note_has({"no column", "sbecc"}));
}

TEST(HealthLogs, SmiDmonEccReplaysAndVideoEngines) {
  const auto r = import_logs({kLogs / "smi-dmon-health.txt"}, utc());
  ASSERT_EQ(r.count(0), 8U);
  ASSERT_EQ(r.health_of(0).size(), 8U);
  ASSERT_EQ(r.health_of(1).size(), 8U);
  for (std::size_t tick = 0; tick < 8; ++tick) {
    const HealthRow& h = r.health_of(1)[tick];
    EXPECT_EQ(h.wall_ns, k224011 + static_cast<std::int64_t>(tick) * kSecond);
    const double sbe = 10.0 + (tick >= 3 ? 1 : 0) + (tick >= 5 ? 2 : 0);
    EXPECT_EQ(h.get(H::EccCorrectedAggregate), sbe) << "sbecc: aggregate " << tick;
    EXPECT_EQ(h.get(H::EccUncorrectedAggregate), 0.0);
    EXPECT_EQ(h.get(H::PcieReplays), tick >= 4 ? 9.0 : 4.0);
    EXPECT_EQ(h.get(H::EncoderUtilPct), 30.0);
    EXPECT_EQ(h.get(H::DecoderUtilPct), tick == 2 ? std::nullopt : std::optional<double>(15.0));
    EXPECT_FALSE(h.get(H::EccCorrectedVolatile)) << "dmon has no volatile counts";
    EXPECT_FALSE(h.get(H::ViolationPowerNs)) << "pviol is a share, not a time";
  }
  EXPECT_EQ(r.health_of(0)[5].get(H::PcieReplays), 1.0);
  expect_times_of_samples(r, 1);
  EXPECT_TRUE(r.note_has({"dec has no value", "'-'", "1 row"}));
  EXPECT_TRUE(r.note_has({"no column", "pviol, tviol"}));
}

TEST(HealthLogs, DcgmiHealthFieldsAndXidEvents) {
  const auto r = import_logs({kLogs / "dcgmi-dmon-health.txt"}, started());
  ASSERT_EQ(r.count(0), 12U);
  ASSERT_EQ(r.health_of(0).size(), 12U);
  ASSERT_EQ(r.health_of(1).size(), 12U);
  for (std::size_t tick = 0; tick < 12; ++tick) {
    const HealthRow& h = r.health_of(1)[tick];
    const double fault = tick >= 9 ? 1.0 : 0.0;
    const double corrected = tick >= 5 ? 2.0 : 0.0;
    EXPECT_EQ(h.wall_ns, k224011 + static_cast<std::int64_t>(tick) * kSecond);
    EXPECT_EQ(h.get(H::PcieReplays), 3.0);
    EXPECT_EQ(h.get(H::EccEnabled), 1.0);
    EXPECT_EQ(h.get(H::EccCorrectedVolatile), corrected);
    EXPECT_EQ(h.get(H::EccUncorrectedVolatile), fault);
    EXPECT_EQ(h.get(H::EccCorrectedAggregate), 100 + corrected);
    EXPECT_EQ(h.get(H::EccUncorrectedAggregate), fault);
    EXPECT_EQ(h.get(H::RemappedRowsCorrectable), 0.0) << "CRMPS is 394";
    EXPECT_EQ(h.get(H::RemappedRowsUncorrectable), fault) << "URMPS is 393";
    EXPECT_EQ(h.get(H::RowRemapFailure), 0.0);
    EXPECT_EQ(h.get(H::RowRemapPending), fault);
    EXPECT_EQ(h.get(H::EncoderUtilPct), 0.0);
    EXPECT_EQ(h.get(H::ViolationPowerNs), static_cast<double>(tick) * 250'000'000.0);
  }
  const HealthRow& off = r.health_of(0)[3];
  EXPECT_EQ(off.get(H::EccEnabled), 0.0);
  EXPECT_FALSE(off.get(H::EccCorrectedVolatile)) << "N/A with ECC off";
  EXPECT_FALSE(off.get(H::DecoderUtilPct));
  expect_times_of_samples(r, 0);

  const auto xids = r.events_of(EventKind::Xid);
  ASSERT_EQ(xids.size(), 3U);
  EXPECT_EQ(xids[0].device_index, 0U);
  EXPECT_EQ(xids[0].detail, "Xid 48");
  EXPECT_EQ(xids[0].wall_ns, k224011) << "already there at the first tick";
  EXPECT_EQ(xids[1].device_index, 1U);
  EXPECT_EQ(xids[1].detail, "Xid 13");
  EXPECT_EQ(xids[1].wall_ns, k224011 + 4 * kSecond);
  EXPECT_EQ(xids[1].mono_ns, 4 * kSecond);
  EXPECT_EQ(xids[2].detail, "Xid 79");
  EXPECT_EQ(xids[2].wall_ns, k224011 + 9 * kSecond);
  EXPECT_TRUE(r.note_has({"XIDER", "first tick of GPU 0", "may be older"}));
  EXPECT_FALSE(r.note_has({"no column"})) << "every field is read";
}

TEST(HealthLogs, AnXidThatIsNoNumberIsAnError) {
  gpuscope::testing::TempDir tmp;
  const auto log = write_text(fs::path(tmp.path()) / "xid.txt",
                              "#Entity         POWER             XIDER        \n"
                              "ID               W                             \n"
                              "GPU 0           100.000           0            \n"
                              "GPU 0           100.000           4.5          \n");
  const std::string error = import_error({log}, started());
  EXPECT_NE(error.find("xid.txt:4: '4.5' is no Xid"), std::string::npos) << error;
}

}  // namespace
}  // namespace gpuscope::ingest::test
