// `gpuscope job --keep-summary`, run by SLURM's epilog as the SlurmUser, writes
// <summary dir>/<job id>.db. A link planted at that name must be replaced, never followed: before
// the fix the summary was written over the file the link pointed to (any file the SlurmUser may
// write).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/job/job_run.hpp"
#include "core/error.hpp"
#include "fake_source.hpp"
#include "load/loader.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::app {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kT0 = 1'700'000'000'000, kScrape = 15'000;

// One GPU of job 123 on n1, as dcgm-exporter labels it, 40 scrapes.
void add_job(ingest::testing::FakeSource& src) {
  tsdb::Labels gpu = {{"gpu", "0"},
                      {"UUID", "GPU-aaa"},
                      {"device", "nvidia0"},
                      {"Hostname", "n1"},
                      {"instance", "n1:9400"},
                      {"hpc_job", "123"},
                      {"modelName", "NVIDIA H100 80GB HBM3"}};
  std::vector<tsdb::Point> power, active;
  for (int k = 0; k < 40; ++k) {
    power.push_back({kT0 + k * kScrape, 300.0});
    active.push_back({kT0 + k * kScrape, 0.5});
  }
  gpu["__name__"] = "DCGM_FI_DEV_POWER_USAGE";
  src.add(gpu, power);
  gpu["__name__"] = "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO";
  src.add(gpu, active);
}

ingest::JobWindow job_123() {
  ingest::JobWindow job;
  job.kind = "slurm";
  job.id = "123";
  job.window = {kT0, kT0 + 39 * kScrape};
  job.nodes = {"n1"};
  return job;
}

TEST(KeepSummary, APlantedLinkIsReplacedNeverFollowed) {
  gpuscope::testing::TempDir tmp;
  const fs::path dir = fs::path(tmp.path()) / "kept";
  fs::create_directories(dir);
  const fs::path victim = tmp.file("victim.conf");
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, dir / "123.db");

  ingest::testing::FakeSource src;
  add_job(src);
  JobRun o;
  o.summary_dir = dir.string();
  const fs::path kept = keep_job_summary(o, src, job_123());

  EXPECT_TRUE(gpuscope::testing::read_file(victim) == "precious\n") << "the victim was written";
  EXPECT_EQ(kept, dir / "123.db");
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(dir / "123.db")));
  ASSERT_TRUE(fs::is_regular_file(fs::symlink_status(dir / "123.db")));
  // The summary is a run database analyze reads, and nothing else is left in the folder.
  load::AnalyzeOptions options;
  options.inputs = {kept.string()};
  options.trim = "none";
  EXPECT_EQ(load::load_analysis(options).gpus.size(), 1U);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) left.push_back(entry.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"123.db"});
}

TEST(KeepSummary, AnEarlierSummaryIsReplaced) {
  gpuscope::testing::TempDir tmp;
  const fs::path dir = fs::path(tmp.path()) / "kept";
  fs::create_directories(dir);
  std::ofstream(dir / "123.db") << "an old summary";
  ingest::testing::FakeSource src;
  add_job(src);
  JobRun o;
  o.summary_dir = dir.string();
  const fs::path kept = keep_job_summary(o, src, job_123());
  load::AnalyzeOptions options;
  options.inputs = {kept.string()};
  options.trim = "none";
  EXPECT_EQ(load::load_analysis(options).gpus.size(), 1U);
}

// A server keeping 31 days, asked about a job of 2023: before the fix every failure was reworded
// "its series are gone", a query the server refused included.
TEST(JobRetention, OnlyNothingFoundIsBlamedOnTheRetention) {
  struct Month : ingest::testing::FakeSource {
    tsdb::ServerInfo server() override {
      auto s = FakeSource::server();
      s.retention_s = 31 * 86'400.0;
      return s;
    }
  } src;
  const std::int64_t now = kT0 + 400LL * 86'400'000;
  const Error refused("VictoriaMetrics at http://vm.test:8428 refused /api/v1/export",
                      "422: cannot select more than -search.maxUniqueTimeseries=1", "check");
  const std::string said = job_read_error(refused, src, job_123(), now).what();
  EXPECT_EQ(said, refused.what()) << "the server's refusal is said as it is";
  EXPECT_EQ(said.find("series are gone"), std::string::npos);

  const ingest::NoJobSeries nothing("job 123 ran on n1 but no exporter series names it", "", "");
  const std::string gone = job_read_error(nothing, src, job_123(), now).what();
  EXPECT_NE(gone.find("ended 400 days ago, and the server keeps 31 days"), std::string::npos)
      << gone;
  EXPECT_NE(gone.find("its series are gone"), std::string::npos) << gone;
  // Within the retention, nothing found is said as it is.
  EXPECT_EQ(std::string(job_read_error(nothing, src, job_123(), kT0 + 86'400'000).what()),
            nothing.what());
}

// Series the server's index names but without a sample in the window: said so, and as nothing
// of the job (so the retention may explain it), not "the input holds no run with samples ...
// check the folder or file given".
TEST(JobRetention, SeriesWithoutSamplesInTheWindowAreNothingOfTheJob) {
  ingest::testing::FakeSource src;
  add_job(src);
  ingest::JobWindow later = job_123();
  later.window = {kT0 + 100 * kScrape, kT0 + 140 * kScrape};
  struct Indexed : ingest::testing::FakeSource {
    std::vector<tsdb::Labels> series(const std::string& sel, const tsdb::Window&) override {
      return FakeSource::series(sel, tsdb::Window{0, INT64_MAX / 2'000'000});  // by day: all
    }
  } indexed;
  indexed.data = src.data;
  gpuscope::testing::TempDir tmp;
  JobRun o;
  o.summary_dir = tmp.path();
  try {
    keep_job_summary(o, indexed, later);
    ADD_FAILURE() << "kept";
  } catch (const ingest::NoJobSeries& e) {
    EXPECT_NE(std::string(e.what()).find("hold no sample between"), std::string::npos) << e.what();
  } catch (const Error& e) {
    ADD_FAILURE() << "not NoJobSeries: " << e.what();
  }
}

}  // namespace
}  // namespace gpuscope::app
