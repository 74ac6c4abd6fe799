// Pure functions of src/sweep: the plan (settings, ranges, order) and the restore record format.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "sweep/plan.hpp"
#include "sweep/restore_record.hpp"

namespace gpuscope::sweep {
namespace {

TEST(SweepPlan, RangeIncludesTheStopWhenTheStepsReachIt) {
  EXPECT_EQ(parse_settings("200:700:50", "--power-limits"),
            (std::vector<double>{200, 250, 300, 350, 400, 450, 500, 550, 600, 650, 700}));
  EXPECT_EQ(parse_settings("200:330:100", "--power-limits"), (std::vector<double>{200, 300}));
  EXPECT_EQ(parse_settings("300:300:10", "--power-limits"), (std::vector<double>{300}));
}

TEST(SweepPlan, ListIsSortedWithoutDuplicates) {
  EXPECT_EQ(parse_settings("500,300,400,300", "--power-limits"),
            (std::vector<double>{300, 400, 500}));
  EXPECT_EQ(parse_settings("250.5", "--power-limits"), (std::vector<double>{250.5}));
}

TEST(SweepPlan, BadSettingsAreUsageErrors) {
  for (const char* bad : {"", "200:700", "200:700:0", "700:200:50", "abc", "300,,400", "0,100",
                          "200:700:-5", "1:100000:1"}) {
    try {
      parse_settings(bad, "--power-limits");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 2) << bad;
      EXPECT_NE(std::string(e.what()).find("--power-limits"), std::string::npos) << e.what();
    }
  }
}

TEST(SweepPlan, RangeCheckNamesTheValueAndTheRange) {
  EXPECT_NO_THROW(check_range({200, 700}, 200, 700, "W", "power limit"));
  try {
    check_range({150, 300}, 200, 700, "W", "power limit");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("150 W"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("200–700 W"), std::string::npos) << e.what();
  }
}

TEST(SweepPlan, BaselineIsAddedAndTheOrderIsHighestFirst) {
  const auto plan = make_plan({300, 500}, 700);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].value, 700);
  EXPECT_TRUE(plan[0].baseline);
  EXPECT_EQ(plan[1].value, 500);
  EXPECT_FALSE(plan[1].baseline);
  EXPECT_EQ(plan[2].value, 300);
  const auto with = make_plan({300, 700}, 700);
  ASSERT_EQ(with.size(), 2u);
  EXPECT_TRUE(with[0].baseline);
}

TEST(SweepPlan, TrialsRunRepeatByRepeat) {
  const auto trials = plan_trials(make_plan({300}, 700), 3);
  ASSERT_EQ(trials.size(), 6u);
  const std::vector<double> settings = {700, 300, 700, 300, 700, 300};
  const std::vector<int> repeats = {1, 1, 2, 2, 3, 3};
  for (std::size_t i = 0; i < trials.size(); ++i) {
    EXPECT_EQ(trials[i].number, static_cast<int>(i + 1));
    EXPECT_EQ(trials[i].setting, settings[i]);
    EXPECT_EQ(trials[i].repeat, repeats[i]);
    EXPECT_EQ(trials[i].baseline, settings[i] == 700);
  }
}

TEST(SweepRestoreRecord, RoundTripsThroughJson) {
  RestoreRecord r;
  r.created_unix_ns = 1732280000123456789;
  r.pid = 4242;
  r.host = "node1";
  r.output = "out/sweep.db";
  r.simulate = "h100";
  r.gpus = {{0, "GPU-aaa", 700000, false}, {3, "GPU-bbb", 450000, true}};
  const RestoreRecord back = parse_restore_record(restore_record_json(r), "test");
  EXPECT_EQ(back.created_unix_ns, r.created_unix_ns);
  EXPECT_EQ(back.pid, 4242);
  EXPECT_EQ(back.output, "out/sweep.db");
  EXPECT_EQ(back.simulate, "h100");
  ASSERT_EQ(back.gpus.size(), 2u);
  EXPECT_EQ(back.gpus[1].index, 3u);
  EXPECT_EQ(back.gpus[1].uuid, "GPU-bbb");
  EXPECT_EQ(back.gpus[1].power_limit_mw, 450000u);
  EXPECT_TRUE(back.gpus[1].clocks_locked);
  EXPECT_EQ(restore_record_path("out/sweep.db"), "out/sweep.db.restore.json");
}

TEST(SweepRestoreRecord, SomethingElseIsRefused) {
  EXPECT_THROW(parse_restore_record("{\"gpus\": []}", "x.json"), Error);
  EXPECT_THROW(parse_restore_record("not json", "x.json"), Error);
}

}  // namespace
}  // namespace gpuscope::sweep
