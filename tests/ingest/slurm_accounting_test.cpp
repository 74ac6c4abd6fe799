// SLURM's accounting as sacct prints it (--parsable2 --noheader --allocations): host lists,
// times, allocated GPUs, running and pending jobs, overlapping jobs. The real sacct of the test
// cluster is exercised by tests/integration; these are the formats' corners.
#include "ingest/monitoring/slurm_accounting.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace gpuscope::ingest {
namespace {

using Names = std::vector<std::string>;

class SacctTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    if (tz != nullptr) saved_ = tz;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (saved_)
      setenv("TZ", saved_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
  std::optional<std::string> saved_;
};

TEST(Hostlist, ExpandsRangesListsAndPadding) {
  EXPECT_EQ(expand_hostlist("n[1-3,7]"), (Names{"n1", "n2", "n3", "n7"}));
  EXPECT_EQ(expand_hostlist("gpu-[008-010],login1"),
            (Names{"gpu-008", "gpu-009", "gpu-010", "login1"}));
  EXPECT_EQ(expand_hostlist("nid[001-002]x"), (Names{"nid001x", "nid002x"}));
  EXPECT_EQ(expand_hostlist("r[1-2]n[1-2]"), (Names{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(expand_hostlist("n1"), (Names{"n1"}));
  EXPECT_TRUE(expand_hostlist("None assigned").empty());
}

TEST(Hostlist, RefusesWhatIsNotAHostList) {
  EXPECT_THROW(expand_hostlist("n[1-"), Error);
  EXPECT_THROW(expand_hostlist("n[3-1]"), Error);
  EXPECT_THROW(expand_hostlist("n[a-b]"), Error);
  EXPECT_THROW(expand_hostlist("n[0-999999]"), Error);
}

TEST_F(SacctTest, TimesAreLocalAndUnknownIsAbsent) {
  EXPECT_EQ(sacct_time_ms("2026-11-25T10:00:00"), 1795600800000);
  EXPECT_FALSE(sacct_time_ms("Unknown"));
  EXPECT_FALSE(sacct_time_ms("None"));
  EXPECT_THROW(sacct_time_ms("11/25 10:00"), Error);  // SLURM_TIME_FORMAT=relative
  setenv("TZ", "CET-1", 1);  // one hour ahead of UTC (a POSIX rule: no tzdata needed)
  tzset();
  EXPECT_EQ(sacct_time_ms("2026-11-25T11:00:00"), 1795600800000);
}

TEST_F(SacctTest, AFinishedJobsWindowNodesAndGpus) {
  const std::string out =
      "123|train|alice|COMPLETED|2026-11-25T10:00:00|2026-11-25T11:00:00|01:00:00|n[1-2]|"
      "billing=8,cpu=8,gres/gpu=8,mem=64G,node=2|8|0:0\n";
  const JobWindow job = read_sacct_job(out, "123", 0);
  EXPECT_EQ(job.kind, "slurm");
  EXPECT_EQ(job.window.start_ms, 1795600800000);
  EXPECT_EQ(job.window.end_ms, 1795604400999) << "End is cut to the second";
  EXPECT_EQ(job.nodes, (Names{"n1", "n2"}));
  EXPECT_EQ(job.gpus, 8);
  EXPECT_EQ(job.user, "alice");
  EXPECT_EQ(job.name, "train");
  EXPECT_FALSE(job.running);
}

TEST_F(SacctTest, ARunningJobEndsNowAndTypedGpusAddUp) {
  const std::string out =
      "77|serve|bob|RUNNING|2026-11-25T10:00:00|Unknown|00:03:20|gpu01|cpu=4,gres/gpu:a100=2,"
      "gres/gpu:h100=1,node=1|4|0:0\n";
  const JobWindow job = read_sacct_job(out, "77", 1795601000000);
  EXPECT_TRUE(job.running);
  EXPECT_EQ(job.window.end_ms, 1795601000000);
  EXPECT_EQ(job.gpus, 3);
}

TEST_F(SacctTest, AJobWithoutGpusHasNoCount) {
  const JobWindow job = read_sacct_job(
      "5|x|u|FAILED|2026-11-25T10:00:00|2026-11-25T10:00:05|00:00:05|n1|cpu=1,mem=1G,node=1|1|3:0",
      "5", 0);
  EXPECT_FALSE(job.gpus);
  EXPECT_EQ(job.window.end_ms - job.window.start_ms, 5999);
}

TEST_F(SacctTest, UnknownAndPendingJobsSaySo) {
  try {
    read_sacct_job("", "9", 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no job 9"), std::string::npos) << e.what();
  }
  try {
    read_sacct_job("9|x|u|PENDING|Unknown|Unknown|00:00:00|None assigned||1|0:0", "9", 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has not started"), std::string::npos) << e.what();
  }
  // A job cancelled while pending has a start of "None".
  EXPECT_THROW(
      read_sacct_job("9|x|u|CANCELLED by 0|None|2026-11-25T10:00:00|00:00:00|None assigned||"
                     "1|0:0",
                     "9", 0),
      Error);
}

TEST(SacctOverlaps, OtherJobsButNotStepsOrPending) {
  const std::string out =
      "123|n[1-2]|2026-11-25T10:00:00|2026-11-25T11:00:00|COMPLETED\n"
      "124|n2|2026-11-25T10:30:00|2026-11-25T10:40:00|COMPLETED\n"
      "124.0|n2|2026-11-25T10:30:00|2026-11-25T10:40:00|COMPLETED\n"
      "125|None assigned|Unknown|Unknown|PENDING\n";
  EXPECT_EQ(read_sacct_overlaps(out, "123"), (Names{"124"}));
}

TEST(SacctArguments, AskTheFieldsTheReaderExpects) {
  const auto args = sacct_job_arguments("42");
  EXPECT_EQ(args.back(), std::string(kSacctJobFields));
  const auto overlap = sacct_overlap_arguments({"n1", "n2"}, {0, 1000});
  EXPECT_EQ(overlap[1], "n1,n2");
}

}  // namespace
}  // namespace gpuscope::ingest

namespace gpuscope::ingest {
namespace {

// What the test cluster's real sacct (SLURM 22.05.8, UTC) printed for gpuscope's own fields
// (tests/fixtures/slurm/README.md).
std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GPUSCOPE_TEST_FIXTURE_DIR) + "/slurm/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(SacctTest, RealSacctAnswers) {
  const JobWindow train = read_sacct_job(fixture("finished_two_nodes.txt"), "1", 0);
  EXPECT_EQ(train.nodes, (Names{"n1", "n2"}));
  EXPECT_EQ(train.gpus, 4);
  EXPECT_EQ(train.name, "train");
  EXPECT_EQ(train.window.end_ms - train.window.start_ms, 2999);  // Elapsed 00:00:02, cut
  EXPECT_FALSE(train.running);

  const JobWindow serve = read_sacct_job(fixture("running.txt"), "4", 9'999'999'999'999);
  EXPECT_TRUE(serve.running);
  EXPECT_EQ(serve.window.end_ms, 9'999'999'999'999);
  EXPECT_EQ(serve.gpus, 1);

  const JobWindow broken = read_sacct_job(fixture("failed.txt"), "3", 0);
  EXPECT_FALSE(broken.gpus);
  EXPECT_EQ(broken.nodes, (Names{"n1"}));

  const JobWindow stopped = read_sacct_job(fixture("cancelled.txt"), "6", 0);
  EXPECT_EQ(stopped.nodes, (Names{"n1", "n2"}));
  EXPECT_THROW(read_sacct_job(fixture("pending.txt"), "5", 0), Error);

  // Jobs 1, 2, 3, 4 and 6 ran on n1 in the window: four beside job 1.
  EXPECT_EQ(read_sacct_overlaps(fixture("node_n1_window.txt"), "1"), (Names{"2", "3", "4", "6"}));
}

}  // namespace
}  // namespace gpuscope::ingest
