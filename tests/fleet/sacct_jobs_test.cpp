// sacct's allocation lines into the site's job rows: array tasks and heterogeneous components
// each their own job, lines that are not GPU jobs counted, and a line that cannot be read
// quoted and counted rather than dropped (UTC, so sacct's local times are known).
#include "fleet/sacct_jobs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "support/fixed_time_zone.hpp"

namespace gpuscope::fleet {
namespace {

using gpuscope::testing::FixedTimeZone;

constexpr std::int64_t kStart = 1795600800000;  // 2026-11-25T10:00:00Z
constexpr std::int64_t kNow = kStart + 10 * 3'600'000;

// One sacct line in kSacctJobsFields' order.
std::string line(const std::string& raw, const std::string& shown, const std::string& state,
                 const std::string& start, const std::string& end, const std::string& tres,
                 const std::string& name = "train", const std::string& nodes = "n[1-2]") {
  return raw + "|" + shown + "|alice|physics|gpu|" + state + "|" + start + "|" + end + "|" + nodes +
         "|" + tres + "|0:0|" + name + "\n";
}

const std::string kFrom = "2026-11-25T10:00:00";
const std::string kTo = "2026-11-25T11:00:00";
const std::string kFourGpus = "cpu=8,gres/gpu=4,mem=64G,node=2";

class SacctJobs : public ::testing::Test {
 protected:
  FixedTimeZone utc_{"UTC"};
};

TEST_F(SacctJobs, ArrayTasksAndComponentsAreJobsOfTheirOwn) {
  const auto read = read_sacct_jobs(line("1001", "1000_4", "COMPLETED", kFrom, kTo, kFourGpus) +
                                        line("1002", "1000_5", "COMPLETED", kFrom, kTo, kFourGpus) +
                                        line("2001", "2000+1", "COMPLETED", kFrom, kTo, kFourGpus),
                                    kNow);
  ASSERT_EQ(read.jobs.size(), 3U);
  EXPECT_EQ(read.jobs[0].id, "1001");
  EXPECT_EQ(read.jobs[0].shown_id, "1000_4");
  EXPECT_EQ(read.jobs[1].id, "1002");
  EXPECT_EQ(read.jobs[1].shown_id, "1000_5");
  EXPECT_EQ(read.jobs[2].id, "2001");
  EXPECT_EQ(read.jobs[2].shown_id, "2000+1");
  const SiteJob& job = read.jobs[0];
  EXPECT_EQ(job.user, "alice");
  EXPECT_EQ(job.account, "physics");
  EXPECT_EQ(job.partition, "gpu");
  EXPECT_EQ(job.state, "COMPLETED");
  EXPECT_EQ(job.exit_code, 0);
  EXPECT_EQ(job.start_ms, kStart);
  EXPECT_EQ(job.end_ms, kStart + 3'600'000);
  EXPECT_FALSE(job.running);
  EXPECT_EQ(job.nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(job.gpus, 4);
  EXPECT_DOUBLE_EQ(job.gpu_hours, 4.0);
  EXPECT_EQ(job.gpu_model, "");
  EXPECT_EQ(job.source, JobSource::None) << "no figures before the server is asked";
  EXPECT_EQ(read.without_gpus + read.not_started + read.unreadable_count, 0U);
}

TEST_F(SacctJobs, PendingNeverStartedAndGpulessLinesAreCountedNotJobs) {
  const auto read = read_sacct_jobs(
      line("3000", "3000", "PENDING", "Unknown", "Unknown", "billing=1", "wait", "None assigned") +
          line("3001", "3001", "CANCELLED by 1000", "None", "2026-11-25T10:30:00", kFourGpus,
               "gone", "None assigned") +
          line("3002", "3002", "PENDING", kFrom, "Unknown", kFourGpus) +
          line("3003", "3003", "COMPLETED", kFrom, kTo, "cpu=4,mem=8G,node=1") +
          line("3004", "3004", "COMPLETED", kFrom, kTo, "cpu=4,gres/gpu=0,node=1") +
          line("3005", "3005", "CANCELLED by 1000", kFrom, kTo, kFourGpus),
      kNow);
  EXPECT_EQ(read.not_started, 3U);
  EXPECT_EQ(read.without_gpus, 2U);
  EXPECT_EQ(read.unreadable_count, 0U);
  ASSERT_EQ(read.jobs.size(), 1U) << "a job cancelled while it ran used its GPUs";
  EXPECT_EQ(read.jobs[0].id, "3005");
  EXPECT_EQ(read.jobs[0].state, "CANCELLED") << "the state's first word";
}

TEST_F(SacctJobs, BarsInTheJobNameStayInTheName) {
  const auto read =
      read_sacct_jobs(line("4000", "4000", "COMPLETED", kFrom, kTo, kFourGpus, "a|b|c d"), kNow);
  ASSERT_EQ(read.jobs.size(), 1U);
  EXPECT_EQ(read.jobs[0].name, "a|b|c d");
  EXPECT_EQ(read.jobs[0].exit_code, 0);
}

TEST_F(SacctJobs, ARunningJobEndsNow) {
  const auto read = read_sacct_jobs(line("5000", "5000", "RUNNING", kFrom, "Unknown", kFourGpus) +
                                        line("5001", "5001", "COMPLETING", kFrom, kTo, kFourGpus),
                                    kNow);
  ASSERT_EQ(read.jobs.size(), 2U);
  for (const auto& job : read.jobs) {
    EXPECT_TRUE(job.running) << job.id;
    EXPECT_EQ(job.end_ms, kNow) << job.id;
    EXPECT_DOUBLE_EQ(job.gpu_hours, 40.0) << job.id << ": 10 hours × 4 GPUs";
  }
}

TEST_F(SacctJobs, TypedGresGivesTheCountAndTheModel) {
  const auto read = read_sacct_jobs(
      line("6000", "6000", "COMPLETED", kFrom, kTo, "cpu=8,gres/gpu:h100=2,node=1") +
          line("6001", "6001", "COMPLETED", kFrom, kTo, "cpu=8,gres/gpu=2,gres/gpu:a100=2") +
          line("6002", "6002", "COMPLETED", kFrom, kTo, "gres/gpu:a100=1,gres/gpu:h100=1"),
      kNow);
  ASSERT_EQ(read.jobs.size(), 3U);
  EXPECT_EQ(read.jobs[0].gpus, 2);
  EXPECT_EQ(read.jobs[0].gpu_model, "h100");
  EXPECT_EQ(read.jobs[1].gpus, 2) << "the typed count repeats the untyped one";
  EXPECT_EQ(read.jobs[1].gpu_model, "a100");
  EXPECT_EQ(read.jobs[2].gpus, 2);
  EXPECT_EQ(read.jobs[2].gpu_model, "") << "two types: no one model";
  EXPECT_EQ(allocated_gpu_type("cpu=1,gres/gpumem=10G,gres/gpu:l4=1"), "l4");
  EXPECT_EQ(allocated_gpu_type(""), "");
}

TEST_F(SacctJobs, ExitCodesAndStatesAsSacctWritesThem) {
  std::string text = line("7000", "7000", "FAILED", kFrom, kTo, kFourGpus);
  text.replace(text.find("|0:0|"), 5, "|1:0|");
  text += line("7001", "7001", "CANCELLED by 0", kFrom, kTo, kFourGpus);
  text.replace(text.rfind("|0:0|"), 5, "|0:15|");
  const auto read = read_sacct_jobs(text, kNow);
  ASSERT_EQ(read.jobs.size(), 2U);
  EXPECT_EQ(read.jobs[0].state, "FAILED");
  EXPECT_EQ(read.jobs[0].exit_code, 1);
  EXPECT_EQ(read.jobs[1].exit_code, 0) << "the code before ':', not the signal";
}

TEST_F(SacctJobs, UnreadableLinesAreQuotedAndCountedNeverDropped) {
  std::string text = "garbage without bars\n";
  text += line("8001", "8001", "COMPLETED", "yesterday", kTo, kFourGpus);
  text += line("8002", "8002", "COMPLETED", kTo, kFrom, kFourGpus);  // ends before it starts
  text += line("", "8003", "COMPLETED", kFrom, kTo, kFourGpus);
  text += line("8004", "8004", "COMPLETED", kFrom, kTo, kFourGpus, "ok", "n[1-");
  text += "1|2|3\n";
  text += "4|5|6\n";
  text += line("8005", "8005", "COMPLETED", kFrom, kTo, kFourGpus);
  const auto read = read_sacct_jobs(text, kNow);
  ASSERT_EQ(read.jobs.size(), 1U) << "the good line after the bad ones is read";
  EXPECT_EQ(read.jobs[0].id, "8005");
  EXPECT_EQ(read.unreadable_count, 7U);
  ASSERT_EQ(read.unreadable.size(), 5U) << "the first five quoted";
  EXPECT_EQ(read.unreadable[0], "'garbage without bars' (1 fields, not 12)");
  EXPECT_NE(read.unreadable[1].find("'8001|8001|"), std::string::npos) << read.unreadable[1];
  EXPECT_NE(read.unreadable[1].find("yesterday"), std::string::npos) << read.unreadable[1];
  EXPECT_NE(read.unreadable[2].find("ends (2026-11-25T10:00:00) before it starts"),
            std::string::npos)
      << read.unreadable[2];
  EXPECT_NE(read.unreadable[3].find("no JobIDRaw"), std::string::npos) << read.unreadable[3];
  EXPECT_NE(read.unreadable[4].find("'8004|"), std::string::npos) << read.unreadable[4];
}

TEST_F(SacctJobs, ArgumentsAskForEveryAllocationInLocalTime) {
  JobFilter filter;
  filter.users = {"alice", "bob"};
  filter.states = {"FAILED"};
  const auto args = sacct_jobs_arguments({kStart, kStart + 3'600'000}, filter);
  const auto after = [&](const std::string& option) {
    const auto it = std::find(args.begin(), args.end(), option);
    return it == args.end() || it + 1 == args.end() ? std::string("(absent)") : *(it + 1);
  };
  EXPECT_EQ(after("--starttime"), kFrom);
  EXPECT_EQ(after("--endtime"), kTo);
  EXPECT_EQ(after("--format"), kSacctJobsFields);
  EXPECT_EQ(after("--user"), "alice,bob");
  EXPECT_EQ(after("--state"), "FAILED");
  EXPECT_EQ(after("--accounts"), "(absent)");
  EXPECT_NE(std::find(args.begin(), args.end(), "--allusers"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "--allocations"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "--parsable2"), args.end());
}

}  // namespace
}  // namespace gpuscope::fleet
