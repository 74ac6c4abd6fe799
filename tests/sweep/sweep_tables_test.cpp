// The sweep tables read back (store/sweep_tables.hpp): what `gpuscope report` shows of a sweep
// database is what the sweep wrote; an ordinary run database has no sweep.
#include "store/sweep_tables.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.hpp"
#include "store/run_file.hpp"
#include "store/sqlite.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::store {
namespace {

TEST(SweepTables, ReadBackWhatWasWritten) {
  testing::TempDir dir;
  const std::string path = dir.file("sweep.db");
  {
    auto db = create_database(path);
    close_run_file(*db, path);
  }
  EXPECT_FALSE(read_sweep_tables(path).has_value());

  sweep::SweepRecord r;
  r.knob = sweep::Knob::SmClock;
  r.command = {"./job", "--x", "it's"};
  r.gpus = {0, 2};
  r.repeat = 2;
  r.max_slowdown = 0.15;
  r.eta = 0.3;
  r.p_max_w = 1400;
  r.work_source = "regex: processed ([0-9]+)";
  r.window_begin = "begins at ([0-9.]+)";
  r.status = sweep::SweepStatus::Finished;
  r.restored = true;
  r.notes = {"a note"};
  r.plan = {{1980, true}, {1000, false}};
  sweep::Trial t;
  t.number = 1;
  t.run_id = 1;
  t.setting = 1000;
  t.repeat = 2;
  t.status = sweep::TrialStatus::Ok;
  t.exit_code = 0;
  t.time_s = 0.86;
  t.energy_j = 123.5;
  t.energy_source = "counter";
  t.work_units = 1000;
  t.outlier = true;
  r.trials = {t};
  r.recommendations = {{"min_energy", "minimum energy", 1000, 123.5, 0.86, 52.2, 72.6, ""},
                       {"min_energy_bounded", "bounded", std::nullopt, 0, 0, 0, 0, ""}};
  r.restore.gpus = {{0, "GPU-a", 700000, true}, {2, "GPU-b", 650000, true}};
  write_sweep_tables(path, r);

  const auto back = read_sweep_tables(path);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->knob, sweep::Knob::SmClock);
  EXPECT_EQ(back->command, r.command);
  EXPECT_EQ(back->gpus, r.gpus);
  EXPECT_EQ(back->repeat, 2);
  EXPECT_DOUBLE_EQ(back->max_slowdown, 0.15);
  EXPECT_DOUBLE_EQ(back->eta, 0.3);
  EXPECT_DOUBLE_EQ(back->p_max_w, 1400);
  EXPECT_EQ(back->work_source, r.work_source);
  EXPECT_EQ(back->window_begin, r.window_begin);
  EXPECT_EQ(back->window_end, "");
  EXPECT_EQ(back->status, sweep::SweepStatus::Finished);
  EXPECT_TRUE(back->restored);
  EXPECT_EQ(back->notes, r.notes);
  ASSERT_EQ(back->plan.size(), 2u);
  EXPECT_TRUE(back->plan[0].baseline);
  EXPECT_EQ(back->plan[1].value, 1000);
  ASSERT_EQ(back->trials.size(), 1u);
  EXPECT_EQ(back->trials[0].run_id, 1);
  EXPECT_EQ(back->trials[0].repeat, 2);
  EXPECT_DOUBLE_EQ(back->trials[0].time_s, 0.86);
  EXPECT_EQ(back->trials[0].energy_j, 123.5);
  EXPECT_EQ(back->trials[0].energy_source, "counter");
  EXPECT_FALSE(back->trials[0].throughput.has_value());
  EXPECT_TRUE(back->trials[0].outlier);
  ASSERT_EQ(back->recommendations.size(), 2u);
  EXPECT_EQ(back->recommendations[0].selector, "min_energy");
  EXPECT_EQ(back->recommendations[0].setting, 1000);
  EXPECT_DOUBLE_EQ(back->recommendations[0].energy_saving_pct, 52.2);
  EXPECT_FALSE(back->recommendations[1].setting.has_value());
  ASSERT_EQ(back->restore.gpus.size(), 2u);
  EXPECT_EQ(back->restore.gpus[1].uuid, "GPU-b");
  EXPECT_EQ(back->restore.gpus[1].power_limit_mw, 650000u);
  EXPECT_TRUE(back->restore.gpus[1].clocks_locked);
}

TEST(SweepTables, AFileThatIsNotADatabaseIsAnError) {
  testing::TempDir dir;
  const std::string path = dir.file("notes.db");
  { std::ofstream(path) << "not sqlite at all, just some text that is long enough to be read\n"; }
  EXPECT_THROW(read_sweep_tables(path), Error);
}

}  // namespace
}  // namespace gpuscope::store
