// Reading a SLURM task's context and choosing its output file.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "core/error.hpp"
#include "ranks/output_path.hpp"
#include "ranks/rank_context.hpp"

namespace gpuscope::ranks {
namespace {

EnvLookup fake(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(SlurmEnvironment, ReadsEveryField) {
  auto context = read_slurm_context(fake({{"SLURM_JOB_ID", "4242"},
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
  auto context = read_slurm_context(fake({{"SLURM_PROCID", "5"}}));
  EXPECT_FALSE(context.active());
  EXPECT_FALSE(context.rank.has_value());
}

TEST(SlurmEnvironment, MalformedNumbersAreIgnored) {
  auto context = read_slurm_context(fake({{"SLURM_JOB_ID", "1"}, {"SLURM_PROCID", "x1"}}));
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
    n.ranks.launcher = "slurm";
    n.ranks.job_id = "77";
    n.ranks.rank = 3;
    n.ranks.world_size = ntasks;
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

// Every launcher's variables, as the launcher sets them (Open MPI's as Debian's mpirun 4.1 does).
TEST(RankContext, OpenMpi) {
  auto c = read_rank_context(fake({{"OMPI_COMM_WORLD_RANK", "5"},
                                   {"OMPI_COMM_WORLD_SIZE", "8"},
                                   {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                   {"OMPI_MCA_ess_base_jobid", "2024734721"},
                                   {"PMIX_RANK", "5"},
                                   {"PMIX_NAMESPACE", "2024734721"}}));
  EXPECT_EQ(c.launcher, "openmpi");
  EXPECT_EQ(c.rank, 5);
  EXPECT_EQ(c.world_size, 8);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.local_world_size, 4);
  EXPECT_EQ(c.job_id, "2024734721");
}

TEST(RankContext, OpenMpiFiveNamesItsJobByPmixNamespace) {
  auto c = read_rank_context(fake({{"OMPI_COMM_WORLD_RANK", "0"},
                                   {"OMPI_COMM_WORLD_SIZE", "2"},
                                   {"PMIX_NAMESPACE", "prterun-node1-4242@1"}}));
  EXPECT_EQ(c.launcher, "openmpi");
  EXPECT_EQ(c.job_id, "prterun-node1-4242@1");
}

TEST(RankContext, TorchrunIsInnermostEvenInsideSlurm) {
  auto c = read_rank_context(fake({{"RANK", "6"},
                                   {"WORLD_SIZE", "8"},
                                   {"LOCAL_RANK", "2"},
                                   {"LOCAL_WORLD_SIZE", "4"},
                                   {"TORCHELASTIC_RUN_ID", "job-17"},
                                   {"SLURM_JOB_ID", "99"},
                                   {"SLURM_PROCID", "1"},
                                   {"SLURM_NTASKS", "2"},
                                   {"SLURMD_NODENAME", "nid2"}}));
  EXPECT_EQ(c.launcher, "torchrun");
  EXPECT_EQ(c.rank, 6);
  EXPECT_EQ(c.world_size, 8);
  EXPECT_EQ(c.local_rank, 2);
  EXPECT_EQ(c.local_world_size, 4);
  EXPECT_EQ(c.job_id, "job-17");
  EXPECT_EQ(c.node_name, "nid2");
}

TEST(RankContext, TorchNeedsRankAndWorldSize) {
  // RANK alone is a common name for other things.
  EXPECT_FALSE(read_rank_context(fake({{"RANK", "3"}})).active());
  EXPECT_FALSE(read_rank_context(fake({{"RANK", "3"}, {"WORLD_SIZE", "2"}})).active());
  auto c = read_rank_context(fake({{"RANK", "1"}, {"WORLD_SIZE", "2"}}));
  EXPECT_EQ(c.launcher, "torch");
  EXPECT_FALSE(c.job_id.has_value());
  // torchrun's default rendezvous id "none" is no id.
  auto none = read_rank_context(
      fake({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_RUN_ID", "none"}}));
  EXPECT_EQ(none.launcher, "torchrun");
  EXPECT_FALSE(none.job_id.has_value());
}

TEST(RankContext, HydraAndIntelMpi) {
  auto c = read_rank_context(fake(
      {{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}}));
  EXPECT_EQ(c.launcher, "pmi");
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.world_size, 4);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.local_world_size, 2);
  EXPECT_FALSE(c.job_id.has_value());
}

TEST(RankContext, Mvapich) {
  auto c = read_rank_context(fake({{"MV2_COMM_WORLD_RANK", "2"}, {"MV2_COMM_WORLD_SIZE", "4"}}));
  EXPECT_EQ(c.launcher, "mvapich");
  EXPECT_EQ(c.rank, 2);
}

TEST(RankContext, PmixAlone) {
  auto c = read_rank_context(fake({{"PMIX_RANK", "7"}, {"PMIX_NAMESPACE", "ns/1"}}));
  EXPECT_EQ(c.launcher, "pmix");
  EXPECT_EQ(c.rank, 7);
  EXPECT_EQ(c.job_id, "ns/1");
  EXPECT_FALSE(c.world_size.has_value());
}

TEST(RankContext, SrunWithPmixIsSlurm) {
  // srun --mpi=pmix sets PMIX_RANK to the task's own SLURM_PROCID: SLURM knows more.
  auto c = read_rank_context(fake({{"PMIX_RANK", "3"},
                                   {"SLURM_JOB_ID", "55"},
                                   {"SLURM_PROCID", "3"},
                                   {"SLURM_LOCALID", "1"},
                                   {"SLURM_NTASKS", "4"}}));
  EXPECT_EQ(c.launcher, "slurm");
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.world_size, 4);
  EXPECT_EQ(c.job_id, "55");
}

TEST(RankContext, MpiexecInsideABatchScriptIsPmiWithSlurmsJob) {
  // Hydra's mpiexec in an sbatch script: the batch step's SLURM_PROCID is 0 for every rank.
  auto c = read_rank_context(fake({{"PMI_RANK", "2"},
                                   {"PMI_SIZE", "4"},
                                   {"SLURM_JOB_ID", "55"},
                                   {"SLURM_PROCID", "0"},
                                   {"SLURM_NTASKS", "1"}}));
  EXPECT_EQ(c.launcher, "pmi");
  EXPECT_EQ(c.rank, 2);
  EXPECT_EQ(c.job_id, "55");
}

TEST(RankContext, KubernetesIndexedJobAndDownwardApi) {
  auto c = read_rank_context(fake({{"JOB_COMPLETION_INDEX", "4"},
                                   {"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                   {"HOSTNAME", "train-4-abcde"},
                                   {"POD_NAMESPACE", "ml"},
                                   {"NODE_NAME", "gpu-node-7"}}));
  EXPECT_EQ(c.launcher, "kubernetes");
  EXPECT_EQ(c.rank, 4);
  EXPECT_EQ(c.pod_name, "train-4-abcde");
  EXPECT_EQ(c.pod_namespace, "ml");
  EXPECT_EQ(c.node_name, "gpu-node-7");
  // Outside a pod HOSTNAME is only a host name.
  auto outside = read_rank_context(fake({{"HOSTNAME", "laptop"}}));
  EXPECT_FALSE(outside.active());
  EXPECT_FALSE(outside.pod_name.has_value());
}

TEST(RankContext, MalformedValuesAreAbsentNotGuessed) {
  auto c = read_rank_context(fake({{"OMPI_COMM_WORLD_RANK", "1"},
                                   {"OMPI_COMM_WORLD_SIZE", "four"},
                                   {"OMPI_COMM_WORLD_LOCAL_RANK", "-1"}}));
  EXPECT_EQ(c.launcher, "openmpi");
  EXPECT_EQ(c.rank, 1);
  EXPECT_FALSE(c.world_size.has_value());
  EXPECT_FALSE(c.local_rank.has_value());
  EXPECT_FALSE(read_rank_context(fake({{"OMPI_COMM_WORLD_RANK", "x"}})).active());
}

OutputNaming under(std::map<std::string, std::string> vars) {
  OutputNaming n;
  n.host = "vm";
  n.timestamp = "20261125-090000";
  auto env = fake(std::move(vars));
  n.slurm = read_slurm_context(env);
  n.ranks = read_rank_context(env);
  return n;
}

TEST(OutputPath, RanksOfOneMpirunNeverShareADefaultName) {
  std::set<std::filesystem::path> names;
  for (int r = 0; r < 4; ++r) {
    names.insert(expand_output_path("", under({{"OMPI_COMM_WORLD_RANK", std::to_string(r)},
                                               {"OMPI_COMM_WORLD_SIZE", "4"},
                                               {"OMPI_MCA_ess_base_jobid", "2024734721"}})));
  }
  ASSERT_EQ(names.size(), 4U);
  EXPECT_EQ(*names.begin(), "gpuscope-openmpi-2024734721/vm.rank0.db");
}

TEST(OutputPath, LauncherWithoutAJobIdPutsTheRankInTheName) {
  EXPECT_EQ(expand_output_path("", under({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}})),
            "gpuscope-vm-20261125-090000.rank2.db");
  EXPECT_EQ(expand_output_path("out/", under({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}})),
            "out/vm.rank2.db");
}

TEST(OutputPath, JobIdsBecomeSafeFileNames) {
  EXPECT_EQ(expand_output_path("", under({{"PMIX_RANK", "1"}, {"PMIX_NAMESPACE", "a/b:c"}})),
            "gpuscope-pmix-a_b_c/vm.rank1.db");
}

TEST(OutputPath, NoEnvironmentMovesTheDefaultFileOutOfItsDirectory) {
  auto n = under({{"SLURM_JOB_ID", "../../etc"}, {"SLURM_STEP_ID", "/x"}, {"SLURM_PROCID", "0"}});
  n.host = "../evil";
  EXPECT_EQ(expand_output_path("", n), "gpuscope-.._.._etc._x/.._evil.rank0.db");
  EXPECT_EQ(expand_output_path("run-%j-%s-%h.db", n), "run-.._.._etc-_x-.._evil.db");
}

TEST(OutputPath, PatternsWithEveryLauncher) {
  auto torch = under(
      {{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"TORCHELASTIC_RUN_ID", "r9"}});
  EXPECT_EQ(expand_output_path("run-%j-%r-%l.db", torch), "run-r9-3-1.db");
  EXPECT_THROW(expand_output_path("run.db", torch), Error);  // four ranks, one file
  EXPECT_EQ(expand_output_path("run-%p.db", torch),
            fmt::format("run-{}.db", ::getpid()));  // the pid tells them apart too
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
}  // namespace gpuscope::ranks
