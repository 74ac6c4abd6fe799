// dcgm::Session and Watch through the loader and the simulated libdcgm (the same dlopen path as
// NVIDIA's library), and collect's DCGM helpers: the single-pass fallback and index ranges.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "collect/dcgm_feed.hpp"
#include "collect/saturation.hpp"
#include "dcgm/session.hpp"
#include "sim_env.hpp"
#include "support/programs.hpp"

namespace gpuscope::testing {
namespace {

using dcgm::ConnectOptions;
using dcgm::Library;
using dcgm::Session;

std::shared_ptr<const Library> sim_dcgm() {
  return Library::open({GPUSCOPE_TEST_SIM_DCGM_LIBRARY});
}

// The shipped a100-dcgm scenario with its "dcgm" object replaced.
std::string a100_with(const SimEnvironment& env, const std::string& dcgm) {
  std::ifstream in(SimEnvironment::shipped("a100-dcgm"));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto at = text.find(R"("dcgm": {"hostengine": "localhost:5555"})");
  text.replace(at, std::string(R"("dcgm": {"hostengine": "localhost:5555"})").size(),
               R"("dcgm": )" + dcgm);
  const std::string path = env.dir() + "/scenario.json";
  std::ofstream(path) << text;
  return path;
}

TEST(DcgmSession, AutoJoinsARunningHostEngine) {
  SimEnvironment env(SimEnvironment::shipped("a100-dcgm"));
  Session session(sim_dcgm(), ConnectOptions{});
  EXPECT_FALSE(session.embedded());
  EXPECT_EQ(session.description(), "nv-hostengine at localhost:5555");
  auto ids = session.gpu_ids();
  ASSERT_TRUE(ids) << session.describe(ids.error());
  EXPECT_EQ(ids->size(), 4U);
  std::set<std::string> uuids;
  for (unsigned id : *ids) {
    auto uuid = session.uuid(id);
    ASSERT_TRUE(uuid);
    EXPECT_EQ(uuid->rfind("GPU-", 0), 0U);
    uuids.insert(*uuid);
  }
  EXPECT_EQ(uuids.size(), 4U);
  auto groups = session.metric_groups(0);
  ASSERT_TRUE(groups);
  EXPECT_GE(groups->size(), 6U);
}

TEST(DcgmSession, AutoStartsEmbeddedWithoutAHostEngine) {
  SimEnvironment env(SimEnvironment::shipped("a100-dcgm"));
  SimEnvironment scenario(a100_with(env, "{}"));
  Session session(sim_dcgm(), ConnectOptions{});
  EXPECT_TRUE(session.embedded());
  EXPECT_EQ(session.description(), "embedded in gpuscope");
}

TEST(DcgmSession, SaysWhatItTriedWhenNothingAnswers) {
  SimEnvironment env(SimEnvironment::shipped("a100-dcgm"));
  SimEnvironment scenario(a100_with(env, R"({"embedded": false})"));
  try {
    Session session(sim_dcgm(), ConnectOptions{});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.summary(), "DCGM is installed but gpuscope cannot reach it");
    EXPECT_NE(e.reason().find("no nv-hostengine at localhost:5555"), std::string::npos)
        << e.reason();
    EXPECT_NE(e.reason().find("embedded DCGM did not start"), std::string::npos) << e.reason();
    EXPECT_NE(e.hint().find("nv-hostengine"), std::string::npos);
  }
  // A named host engine is the only one tried.
  SimEnvironment running(SimEnvironment::shipped("a100-dcgm"));
  try {
    Session session(sim_dcgm(), ConnectOptions{"otherhost:5555"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find("no nv-hostengine at otherhost:5555"), std::string::npos);
    EXPECT_EQ(e.reason().find("embedded"), std::string::npos) << e.reason();
  }
}

TEST(DcgmSession, WatchGivesRatiosAndCleansUp) {
  SimEnvironment env(SimEnvironment::shipped("a100-dcgm"));
  Session session(sim_dcgm(), ConnectOptions{"embedded"});  // beside no host engine's watches
  // (embedded beside the scenario's host engine: device fields only, the counters are its)
  auto watch = dcgm::Watch::start(session, {1}, {203, 252}, std::chrono::milliseconds(100));
  ASSERT_TRUE(watch) << session.describe(watch.error());
  std::vector<dcgmFieldValue_v2> values;
  ASSERT_TRUE((*watch)->latest(1, values));
  ASSERT_EQ(values.size(), 2U);
  EXPECT_EQ(values[0].status, dcgm::kOk);
  EXPECT_EQ(values[0].fieldId, 203);
  auto prof = dcgm::Watch::start(session, {1}, {1002}, std::chrono::milliseconds(100));
  ASSERT_FALSE(prof);
  EXPECT_EQ(prof.error().code, dcgm::kInUse);
  EXPECT_NE(session.describe(prof.error()).find("held by the nv-hostengine"), std::string::npos)
      << session.describe(prof.error());
}

TEST(DcgmSession, ProfilingValuesArriveAfterTwoSamples) {
  SimEnvironment env(SimEnvironment::shipped("a100-dcgm"));
  Session session(sim_dcgm(), ConnectOptions{});
  const auto started = std::chrono::steady_clock::now();
  auto watch = dcgm::Watch::start(session, {0}, {1002, 1009}, std::chrono::milliseconds(100));
  ASSERT_TRUE(watch) << session.describe(watch.error());
  std::vector<dcgmFieldValue_v2> values;
  ASSERT_TRUE((*watch)->latest(0, values));
  // Before two sampling periods have passed there is no value yet (a machine slow enough to
  // pass them already is not asked this).
  if (std::chrono::steady_clock::now() - started < std::chrono::milliseconds(150)) {
    EXPECT_EQ(values[0].status, dcgm::kNoData);
  }
  // After them, one comes (the simulated DCGM's time is the wall clock's).
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  ASSERT_TRUE(gpuscope::testing::eventually(
      [&] { return (*watch)->latest(0, values) && values[0].status == dcgm::kOk; },
      std::chrono::seconds(30)));
  EXPECT_GE(values[0].value.dbl, 0.0);
  EXPECT_LE(values[0].value.dbl, 1.0);
  EXPECT_EQ(values[1].fieldType, dcgm::kTypeInt64);
}

TEST(DcgmFeed, StartAsksForTheMetricGroupsOnce) {
  SimEnvironment env(SimEnvironment::shipped("a100-dcgm"));
  // The host engine answers one metric-groups call of the connection, then no more.
  SimEnvironment scenario(
      a100_with(env, R"({"hostengine": "localhost:5555", "metric_groups_answers": 1})"));
  collect::DcgmFeed feed(std::make_unique<Session>(sim_dcgm(), ConnectOptions{}));
  std::vector<std::string> notes;
  EXPECT_EQ(feed.start(0, 0, std::chrono::milliseconds(100), notes), "");
  EXPECT_TRUE(notes.empty());
  // The next GPU's call is refused: it says why instead of watching nothing.
  const std::string why = feed.start(1, 1, std::chrono::milliseconds(100), notes);
  EXPECT_NE(why.find("dcgmProfGetSupportedMetricGroups"), std::string::npos) << why;
  EXPECT_NE(why.find("CONNECTION_NOT_VALID"), std::string::npos) << why;
}

TEST(DcgmFeed, SinglePassKeepsOneMinorGroupPerMajor) {
  const std::vector<dcgm::MetricGroup> groups = {{0, 0, {1002, 1003, 1004, 1007}},
                                                 {0, 1, {1002, 1003, 1006}},
                                                 {0, 2, {1002, 1003, 1008}},
                                                 {1, 0, {1005}}};
  const auto pass = collect::single_pass(groups, {1002, 1003, 1004, 1005, 1006, 1007, 1008});
  EXPECT_EQ(pass.fields, (std::vector<unsigned short>{1002, 1003, 1004, 1005, 1007}));
  EXPECT_EQ(pass.left_out, (std::vector<unsigned short>{1006, 1008}));
  EXPECT_EQ(collect::describe_fields(pass.left_out), "fp64_active_pct, fp16_active_pct");
  // The group with most of what is wanted wins, whatever its position.
  const auto fp64 = collect::single_pass(groups, {1002, 1006});
  EXPECT_TRUE(fp64.left_out.empty());
}

TEST(DcgmFeed, EveryProfilingFieldMapsToAPercentOrARate) {
  for (const auto& m : collect::dcgm_mappings()) {
    const auto& metric = info(m.metric);
    if (m.field >= 1001 && m.field <= 1008) {
      EXPECT_EQ(metric.unit, "%");
      EXPECT_EQ(m.scale, 100.0) << "ratios become percent";
    }
    if (m.field >= 1009 && m.field <= 1012) {
      EXPECT_EQ(metric.unit, "B/s");
      EXPECT_EQ(m.scale, 1.0);
    }
    if (m.field >= 250 && m.field <= 253) {
      EXPECT_EQ(m.scale, 1024.0 * 1024.0) << "MiB to bytes";
    }
  }
}

TEST(Saturation, IndexRanges) {
  EXPECT_EQ(collect::index_ranges({3, 0, 1, 2, 6}), "0-3, 6");
  EXPECT_EQ(collect::index_ranges({5}), "5");
  EXPECT_EQ(collect::index_ranges({}), "");
}

}  // namespace
}  // namespace gpuscope::testing
