// The monitor's table, JSON and in-place redraw.
#include "exporter/monitor_view.hpp"

#include <gtest/gtest.h>

#include "sample_rows.hpp"

namespace gpuscope::exporter {
namespace {

using testing::gpu;
using testing::row;

Snapshot two_gpus() {
  LatestValues latest({gpu(0), gpu(1)});
  SampleRow r = row(0, 1'000'000'000, 612.4);
  r.set(Metric::GpuUtilPct, 97);
  r.set(Metric::TemperatureC, 71);
  r.set(Metric::SmClockMhz, 1755);
  latest.on_sample(r);
  latest.on_sample(row(0, 3'000'000'000, 612.4));
  return latest.snapshot();
}

TEST(MonitorViewTest, TableHasOneLinePerGpuAndDashesForMissingValues) {
  const std::string table = monitor_table(two_gpus());
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = table.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(table.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 3u) << table;
  EXPECT_NE(lines[0].find("throttle"), std::string::npos);
  EXPECT_NE(lines[1].find("97%"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("612 / 700 W"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" 2 J"), std::string::npos) << lines[1];  // 2000 mJ over 2 s
  EXPECT_NE(lines[1].find("24.0 / 80 GiB"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("1755 MHz"), std::string::npos);
  EXPECT_NE(lines[1].find("power cap"), std::string::npos);
  // GPU 1 has no sample yet: every measured value is a dash, none is 0 (the cap and the total
  // memory come from the GPU's description).
  EXPECT_EQ(lines[2].find('%'), std::string::npos) << lines[2];
  EXPECT_EQ(lines[2].find("MHz"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("- / 700 W"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("- / 80 GiB"), std::string::npos) << lines[2];
}

TEST(MonitorViewTest, JsonHasEveryCatalogMetricWithNullForMissing) {
  const nlohmann::json j = monitor_json(two_gpus());
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["power_w"], 612.4);
  EXPECT_EQ(j["gpus"][0]["sm_active_pct"], 61);
  EXPECT_TRUE(j["gpus"][0]["dram_active_pct"].is_null());
  EXPECT_TRUE(j["gpus"][1]["power_w"].is_null());
  EXPECT_EQ(j["gpus"][0]["clock_event_reasons_text"], "power cap");
  EXPECT_EQ(j["gpus"][0]["uuid"], "GPU-00000000");
  EXPECT_EQ(j["gpus"][0].size(), kMetricCount + 12);
  EXPECT_TRUE(j["gpus"][0]["last_xid"].is_null());  // no Xid: null, not 0
  EXPECT_EQ(j["gpus"][0]["xid_events"], 0);
  EXPECT_TRUE(j["gpus"][0]["health_alert"].is_null());
}

TEST(MonitorViewTest, AGpuWithAnXidOrAPendingRemapIsMarked) {
  LatestValues latest({gpu(0), gpu(1), gpu(2)});
  for (unsigned i = 0; i < 3; ++i) latest.on_sample(row(i, 1'000'000'000, 300));
  latest.on_event(
      {1'000'000'000, 1'000'000'000, 1u, EventKind::Xid, "Xid 48: Double Bit ECC Error"});
  HealthRow pending;
  pending.device_index = 2;
  pending.set(HealthMetric::RowRemapPending, 1);
  latest.on_health(pending);
  HealthRow clean;
  clean.device_index = 0;
  clean.set(HealthMetric::RowRemapPending, 0);
  latest.on_health(clean);
  const auto snapshot = latest.snapshot();
  const std::string table = monitor_table(snapshot);
  EXPECT_NE(table.find("\n0 "), std::string::npos) << table;  // GPU 0 unmarked
  EXPECT_NE(table.find("\n1! "), std::string::npos) << table;
  EXPECT_NE(table.find("\n2! "), std::string::npos) << table;
  EXPECT_NE(table.find("! GPU 1: Xid 48"), std::string::npos) << table;
  EXPECT_NE(table.find("! GPU 2: row remap pending"), std::string::npos) << table;
  const nlohmann::json j = monitor_json(snapshot);
  EXPECT_EQ(j["gpus"][1]["last_xid"], 48);
  EXPECT_EQ(j["gpus"][2]["row_remap_pending"], true);
  EXPECT_EQ(j["gpus"][0]["row_remap_pending"], false);
  EXPECT_TRUE(j["gpus"][0]["health_alert"].is_null());
}

TEST(MonitorViewTest, ClockReasonsInShortWords) {
  EXPECT_EQ(short_clock_reasons(0), "-");
  EXPECT_EQ(short_clock_reasons(0x1), "idle");
  EXPECT_EQ(short_clock_reasons(0x4 | 0x20), "power cap,thermal");
}

TEST(MonitorViewTest, RedrawOverwritesInPlaceWithoutClearingTheScreen) {
  InPlaceFrame frame;
  const std::string first = frame.redraw("a\nb\nc\n");
  EXPECT_EQ(first, "a\033[K\nb\033[K\nc\033[K\n");
  const std::string second = frame.redraw("x\ny\nz\n");
  EXPECT_EQ(second, "\r\033[3Ax\033[K\ny\033[K\nz\033[K\n");
  EXPECT_EQ(second.find("\033[2J"), std::string::npos);  // never a full clear: no flicker
  const std::string shorter = frame.redraw("only\n");
  EXPECT_EQ(shorter, "\r\033[3Aonly\033[K\n\033[J");
}

}  // namespace
}  // namespace gpuscope::exporter
