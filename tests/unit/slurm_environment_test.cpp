// Reading a SLURM task's context and choosing its output file.
#include <gtest/gtest.h>

#include <map>

#include "core/error.hpp"
#include "slurm/environment.hpp"
#include "slurm/output_path.hpp"

namespace gpuscope::slurm {
namespace {

EnvLookup fake(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(SlurmEnvironment, ReadsEveryField) {
  auto context = read_context(fake({{"SLURM_JOB_ID", "4242"},
                                    {"SLURM_STEP_ID", "3"},
                                    {"SLURM_PROCID", "5"},
                                    {"SLURM_LOCALID", "1"},
                                    {"SLURM_NODEID", "2"},
                                    {"SLURMD_NODENAME", "nid001234"},
                                    {"SLURM_NTASKS", "8"},
                                    {"SLURM_STEP_GPUS", "2,3"}}));
  ASSERT_TRUE(context.active());
  EXPECT_EQ(context.job_id, "4242");
  EXPECT_EQ(context.step_id, "3");
  EXPECT_EQ(context.rank, 5);
  EXPECT_EQ(context.local_rank, 1);
  EXPECT_EQ(context.node_id, 2);
  EXPECT_EQ(context.node_name, "nid001234");
  EXPECT_EQ(context.ntasks, 8);
  EXPECT_EQ(context.step_gpus, "2,3");
}

TEST(SlurmEnvironment, OutsideSlurmIsEmpty) {
  auto context = read_context(fake({{"SLURM_PROCID", "5"}}));
  EXPECT_FALSE(context.active());
  EXPECT_FALSE(context.rank.has_value());
}

TEST(SlurmEnvironment, MalformedNumbersAreIgnored) {
  auto context = read_context(fake({{"SLURM_JOB_ID", "1"}, {"SLURM_PROCID", "x1"}}));
  EXPECT_TRUE(context.active());
  EXPECT_FALSE(context.rank.has_value());
}

TEST(SlurmEnvironment, VisibleGpusPreferCuda) {
  auto both = visible_gpus(fake({{"CUDA_VISIBLE_DEVICES", "1"}, {"SLURM_STEP_GPUS", "0,1"}}));
  ASSERT_TRUE(both);
  EXPECT_EQ(both->source, "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(both->list, "1");
  auto slurm_only = visible_gpus(fake({{"SLURM_JOB_GPUS", "0,1"}}));
  ASSERT_TRUE(slurm_only);
  EXPECT_EQ(slurm_only->source, "SLURM_JOB_GPUS");
  auto empty_cuda = visible_gpus(fake({{"CUDA_VISIBLE_DEVICES", ""}}));
  ASSERT_TRUE(empty_cuda);  // set but empty means "no GPU", not "unset"
  EXPECT_EQ(empty_cuda->list, "");
  EXPECT_FALSE(visible_gpus(fake({})).has_value());
}

OutputNaming naming(bool under_slurm, int ntasks = 4) {
  OutputNaming n;
  n.host = "nid0012";
  n.timestamp = "20261122-101500";
  if (under_slurm) {
    n.slurm.job_id = "77";
    n.slurm.step_id = "0";
    n.slurm.rank = 3;
    n.slurm.ntasks = ntasks;
  }
  return n;
}

TEST(OutputPath, DefaultUnderSlurmIsPerRankInAJobDirectory) {
  EXPECT_EQ(expand_output_path("", naming(true)), "gpuscope-77.0/nid0012.rank3.db");
}

TEST(OutputPath, DefaultOutsideSlurmIsTimestamped) {
  EXPECT_EQ(expand_output_path("", naming(false)), "gpuscope-nid0012-20261122-101500.db");
}

TEST(OutputPath, DirectoryGetsPerRankFiles) {
  EXPECT_EQ(expand_output_path("out/", naming(true)), "out/nid0012.rank3.db");
}

TEST(OutputPath, PatternExpandsEverySequence) {
  EXPECT_EQ(expand_output_path("run-%j.%s-%h-r%r-%t-100%%.db", naming(true)),
            "run-77.0-nid0012-r3-20261122-101500-100%.db");
}

TEST(OutputPath, SharedFileForManyRanksIsRefused) {
  EXPECT_THROW(expand_output_path("run.db", naming(true)), Error);
  EXPECT_NO_THROW(expand_output_path("run.db", naming(true, 1)));
  auto per_node = naming(true);
  per_node.per_node = true;
  EXPECT_EQ(expand_output_path("run-%h.db", per_node), "run-nid0012.db");
  EXPECT_THROW(expand_output_path("run-%h.db", naming(true)), Error);
}

TEST(OutputPath, UnknownSequenceIsAUsageError) {
  try {
    expand_output_path("run-%x.db", naming(false));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("%x"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuscope::slurm
