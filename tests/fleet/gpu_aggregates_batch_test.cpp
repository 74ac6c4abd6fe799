// Many jobs per query against the fake server (fake_promql_source.hpp): one query per figure
// names every job of a batch in its label's regex and each answer lands on its job; batches of
// jobs_per_query and the halving of a batch the server refuses for a limit give the same
// figures; an id cannot widen the regex; a server's error fails the read.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "aggregate_test_data.hpp"
#include "fake_promql_source.hpp"
#include "fleet/gpu_aggregates.hpp"
#include "promql_text.hpp"
#include "tsdb/client.hpp"

namespace gpuscope::fleet {
namespace {

using testing::every10s;
using testing::FakePromqlSource;
using testing::job;
using testing::lex_promql;
using testing::only_gpu;
using testing::read_aggregates;
using testing::series;

const std::string kUtil = "gpuscope_gpu_util_ratio";

// Four jobs: three GPUs at once, then the first GPU again for a later job.
std::vector<AggregateJob> four_jobs(FakePromqlSource& src) {
  std::vector<AggregateJob> jobs;
  for (int i = 1; i <= 3; ++i) {
    tsdb::Labels gpu = {
        {"uuid", "GPU-" + std::to_string(i)}, {"gpu", std::to_string(i - 1)}, {"hostname", "n1"}};
    src.add(series(kUtil, gpu, std::to_string(i)), every10s(0, 100, 0.1 * i));
    jobs.push_back(job(std::to_string(i), 0, 100));
  }
  tsdb::Labels first = {{"uuid", "GPU-1"}, {"gpu", "0"}, {"hostname", "n1"}};
  src.add(series(kUtil, first), every10s(110, 190, 0.0));  // between the jobs: neither's
  src.add(series(kUtil, first, "4"), every10s(200, 300, 0.9));
  jobs.push_back(job("4", 200, 300));
  return jobs;
}

// The ids of the job-label regex each query asked.
std::vector<std::vector<std::string>> ids_asked(const FakePromqlSource& src) {
  std::vector<std::vector<std::string>> out;
  for (const auto& e : src.asked) {
    const auto text = lex_promql(e);
    const auto at = text.shape.find("=~\"#");
    if (at == std::string::npos) continue;
    out.push_back(
        FakePromqlSource::regex_ids(text.strings.at(std::stoul(text.shape.substr(at + 4)))));
  }
  return out;
}

void expect_four_jobs(const AggregateRead& r) {
  EXPECT_NEAR(only_gpu(r, "1").util_pct.value_or(0), 10, 1e-9);
  EXPECT_NEAR(only_gpu(r, "2").util_pct.value_or(0), 20, 1e-9);
  EXPECT_NEAR(only_gpu(r, "3").util_pct.value_or(0), 30, 1e-9);
  EXPECT_EQ(only_gpu(r, "1").key, "GPU-1");
  EXPECT_EQ(only_gpu(r, "4").key, "GPU-1");
  EXPECT_NEAR(only_gpu(r, "4").util_pct.value_or(0), 90, 1e-9) << "its labelled samples only";
  EXPECT_DOUBLE_EQ(only_gpu(r, "1").samples, 11);
  EXPECT_DOUBLE_EQ(only_gpu(r, "4").samples, 11);
}

TEST(GpuAggregatesBatch, OneQueryPerFigureNamesEveryJobAndEachAnswerLandsOnItsJob) {
  FakePromqlSource src;
  const auto jobs = four_jobs(src);
  const auto r = read_aggregates(src, jobs);
  expect_four_jobs(r);
  EXPECT_EQ(r.queries, src.asked.size());
  const auto ids = ids_asked(src);
  ASSERT_EQ(ids.size(), src.asked.size()) << "every query is a batch's";
  for (const auto& asked : ids) {
    EXPECT_EQ(std::set<std::string>(asked.begin(), asked.end()),
              (std::set<std::string>{"1", "2", "3", "4"}));
  }
  for (const auto& e : src.asked) {
    EXPECT_EQ(e.find("label_replace("), std::string::npos) << e;
    EXPECT_TRUE(e.find("slurm_job_id, __name__") != std::string::npos ||
                e.starts_with("label_match("))
        << "grouped by the job label and the name, or each series: " << e;
    // The span: 60 s before job 1's start to 60 s + 999 ms after job 4's end.
    EXPECT_NE(e.find("[420999ms] @ 1795924560.999"), std::string::npos) << e;
  }
}

TEST(GpuAggregatesBatch, JobsPerQueryBatchesAndGivesTheSameFigures) {
  FakePromqlSource all_src, batched_src;
  const auto jobs = four_jobs(all_src);
  four_jobs(batched_src);
  const auto all = read_aggregates(all_src, jobs);
  const auto batched = read_aggregates(batched_src, jobs, 3);
  expect_four_jobs(batched);
  for (const auto& asked : ids_asked(batched_src)) EXPECT_LE(asked.size(), 3U);
  EXPECT_EQ(batched.queries, 2 * all.queries) << "two batches, each asking every figure";
  ASSERT_EQ(batched.by_job.size(), 4U);
  for (const auto& [id, gpus] : all.by_job) {
    ASSERT_EQ(batched.by_job.at(id).size(), gpus.size()) << id;
    EXPECT_EQ(batched.by_job.at(id)[0].util_pct, gpus[0].util_pct) << id;
    EXPECT_EQ(batched.by_job.at(id)[0].samples, gpus[0].samples) << id;
  }
}

TEST(GpuAggregatesBatch, ABatchRefusedForALimitIsAskedInHalves) {
  FakePromqlSource all_src, limited_src;
  const auto jobs = four_jobs(all_src);
  four_jobs(limited_src);
  limited_src.max_ids = 1;
  const auto all = read_aggregates(all_src, jobs);
  const auto limited = read_aggregates(limited_src, jobs);
  expect_four_jobs(limited);
  EXPECT_GT(limited_src.refused, 0U);
  EXPECT_EQ(limited.queries, limited_src.asked.size()) << "the refused ones counted too";
  std::size_t answered = 0;
  for (const auto& asked : ids_asked(limited_src)) answered += asked.size() <= 1 ? 1U : 0U;
  EXPECT_EQ(answered, limited_src.asked.size() - limited_src.refused);
  EXPECT_EQ(answered, 4 * all.queries) << "each figure asked for each job alone";
  for (const auto& [id, gpus] : all.by_job) {
    EXPECT_EQ(limited.by_job.at(id)[0].util_pct, gpus[0].util_pct) << id;
  }
}

TEST(GpuAggregatesBatch, ALimitEvenForOneJobFailsTheRead) {
  FakePromqlSource src;
  const auto jobs = four_jobs(src);
  src.max_ids = 0;
  EXPECT_THROW(read_aggregates(src, jobs), tsdb::LimitError);
}

TEST(GpuAggregatesBatch, TheJobstatsIdSeriesPiecesAreHalvedToo) {
  FakePromqlSource src;
  std::vector<AggregateJob> jobs;
  for (const char* id : {"77", "78", "79"}) {
    const std::string uuid = std::string("GPU-") + id;
    tsdb::Labels gpu = {{"uuid", uuid}, {"minor_number", "0"}, {"instance", "n4:9445"}};
    tsdb::Labels id_series = gpu;
    id_series["__name__"] = "nvidia_gpu_jobId";
    src.add(id_series, every10s(0, 100, std::stod(id)));
    gpu["__name__"] = "nvidia_gpu_duty_cycle";
    src.add(gpu, every10s(0, 100, std::stod(id) - 70));
    jobs.push_back(job(id, 0, 100, {"n4"}));
  }
  src.max_ids = 2;
  const auto r = read_aggregates(src, jobs);
  EXPECT_GT(src.refused, 0U);
  for (const char* id : {"77", "78", "79"}) {
    EXPECT_EQ(only_gpu(r, id).key, std::string("GPU-") + id);
    EXPECT_NEAR(only_gpu(r, id).util_pct.value_or(0), std::stod(id) - 70, 1e-9) << id;
  }
}

TEST(GpuAggregatesBatch, AServerErrorFailsTheRead) {
  FakePromqlSource src;
  const auto jobs = four_jobs(src);
  src.fail_at = 2;
  try {
    read_aggregates(src, jobs);
    FAIL() << "a failed query was passed over";
  } catch (const tsdb::LimitError&) {
    FAIL() << "a server error is not a limit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("503"), std::string::npos) << e.what();
  }
  EXPECT_EQ(src.asked.size(), 3U) << "nothing asked after the failure";
}

TEST(GpuAggregatesBatch, HostileJobIdsCannotWidenTheRegex) {
  FakePromqlSource src;
  const tsdb::Labels gpu = {{"gpu", "0"}, {"hostname", "n1"}};
  const std::string hostile = "4\"} or vector(1) # \\ .*";
  src.add(series(kUtil, gpu, hostile), every10s(0, 100, 0.25));
  src.add(series(kUtil, gpu, "4"), every10s(0, 100, 0.75));
  src.add(series(kUtil, gpu, "5"), every10s(0, 100, 0.5));
  const auto r = read_aggregates(src, {job(hostile, 0, 100), job("4", 0, 100), job("1|5", 0, 100)});
  EXPECT_NEAR(only_gpu(r, hostile).util_pct.value_or(0), 25, 1e-9);
  EXPECT_NEAR(only_gpu(r, "4").util_pct.value_or(0), 75, 1e-9);
  EXPECT_EQ(r.by_job.count("1|5"), 0U) << "its id is not 5";
  // What the server's regex would match: the ids it names and nothing else.
  bool seen = false;
  for (const auto& e : src.asked) {
    const auto text = lex_promql(e);
    const auto at = text.shape.find("slurm_job_id=~\"#");
    if (at == std::string::npos) continue;
    const std::string& regex = text.strings.at(std::stoul(text.shape.substr(at + 16)));
    const auto named = FakePromqlSource::regex_ids(regex);
    seen = seen || named.size() == 3;
    const std::regex re(regex);
    for (const std::string& id : named) EXPECT_TRUE(std::regex_match(id, re)) << id << " in " << e;
    for (const char* other : {"5", "1", "45", "4\"} or vector(1) # \\ x", "4\"} or vector(1)"}) {
      EXPECT_FALSE(std::regex_match(std::string(other), re)) << other << " in " << e;
    }
  }
  EXPECT_TRUE(seen) << "the jobs are looked for with their three ids";
}

}  // namespace
}  // namespace gpuscope::fleet
