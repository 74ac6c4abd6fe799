// analyze::node_energy over hand-made series: what adds to the CPU and memory figures and what
// does not (core inside its package, a GH200 module that includes the GPU), the window cutting a
// reading's energy in proportion to time, the total and its carbon flat and through a grid series,
// the figures per phase, one count per node when ranks share it, and the job's CPU-time share.
#include "analyze/node_energy.hpp"

#include <gtest/gtest.h>

#include "analyze/carbon.hpp"

namespace gpuscope::analyze {
namespace {

constexpr std::int64_t kWall0 = 1'800'000'000'000'000'000;

// A domain read every second from t = 0 to `seconds` at a constant power.
NodeDomainSeries steady(const std::string& host, std::size_t run, unsigned number,
                        const std::string& kind, bool additive, double watts, int seconds,
                        bool includes_gpu = false) {
  NodeDomainSeries s;
  s.host = host;
  s.run = run;
  s.domain.domain = number;
  s.domain.kind = kind;
  s.domain.name = kind + std::to_string(number);
  s.domain.zone = "zone" + std::to_string(number);
  s.domain.additive = additive;
  s.domain.includes_gpu = includes_gpu;
  for (int k = 0; k <= seconds; ++k) {
    s.t_s.push_back(k);
    s.wall_ns.push_back(kWall0 + std::int64_t{k} * 1'000'000'000);
    s.joules.push_back(watts * k);
  }
  return s;
}

NodeEnergyInput two_sockets() {
  NodeEnergyInput in;
  in.domains.push_back(steady("n1", 0, 0, "package", true, 100, 10));
  in.domains.push_back(steady("n1", 0, 1, "core", false, 60, 10));
  in.domains.push_back(steady("n1", 0, 2, "dram", true, 20, 10));
  in.domains.push_back(steady("n1", 0, 3, "package", true, 80, 10));
  in.domains.push_back(steady("n1", 0, 4, "module", false, 700, 10, true));
  in.window_start_s = 0;
  in.window_end_s = 10;
  in.gpu_j = 5000;
  in.gpu_carbon_g = 1.0;
  in.flat_g_per_kwh = 360;
  in.pue = 1.5;
  return in;
}

TEST(NodeEnergy, AddsPackagesAndDramOnlyAndTheTotal) {
  const auto n = node_energy(two_sockets());
  ASSERT_TRUE(n);
  EXPECT_DOUBLE_EQ(*n->cpu_j, (100 + 80) * 10.0);
  EXPECT_DOUBLE_EQ(*n->dram_j, 20 * 10.0);
  EXPECT_DOUBLE_EQ(*n->total_j, 5000 + 1800 + 200);
  ASSERT_EQ(n->domains.size(), 5U);
  EXPECT_EQ(n->domains[1].role, NodeRole::NotAdded);
  EXPECT_EQ(n->domains[1].why_not_added, "inside its package");
  EXPECT_EQ(n->domains[4].why_not_added, "includes the GPU");
  EXPECT_DOUBLE_EQ(*n->domains[4].joules, 7000) << "shown, never added";
  EXPECT_DOUBLE_EQ(*n->domains[0].mean_power_w, 100);
  // Carbon: the node's 2000 J at 360 g/kWh and PUE 1.5, plus the GPUs' own.
  EXPECT_NEAR(*n->node_carbon_g, 2000 / 3.6e6 * 360 * 1.5, 1e-12);
  EXPECT_NEAR(*n->total_carbon_g, *n->node_carbon_g + 1.0, 1e-12);
  EXPECT_FALSE(n->job_share) << "no CPU times: no estimate";
}

TEST(NodeEnergy, TheWindowCutsReadingsInProportionToTime) {
  NodeEnergyInput in = two_sockets();
  in.window_start_s = 2.5;
  in.window_end_s = 7.25;
  const auto n = node_energy(in);
  EXPECT_NEAR(*n->cpu_j, 180 * 4.75, 1e-9);
  EXPECT_NEAR(*n->dram_j, 20 * 4.75, 1e-9);
  EXPECT_FALSE(joules_between({0}, {0}, 0, 1)) << "one reading gives no energy";
  EXPECT_EQ(joules_between({0, 1}, {0, 10}, -5, 5), 10) << "clamped, never extrapolated";
}

TEST(NodeEnergy, AGridSeriesIsJoinedReadingByReading) {
  NodeEnergyInput in = two_sockets();
  IntensitySeries series;
  // 100 g/kWh for the first 4 s, 500 after.
  series.periods.push_back({kWall0, kWall0 + 4'000'000'000, 100, IntensityKind::Actual});
  series.periods.push_back(
      {kWall0 + 4'000'000'000, kWall0 + 3'600'000'000'000, 500, IntensityKind::Actual});
  in.series = &series;
  const auto n = node_energy(in);
  const double first = 200 * 4.0, rest = 200 * 6.0;  // the node's 200 W
  EXPECT_NEAR(*n->node_carbon_g, (first * 100 + rest * 500) / 3.6e6 * 1.5, 1e-9);
}

TEST(NodeEnergy, PerPhaseBesideTheGpus) {
  NodeEnergyInput in = two_sockets();
  in.phases.push_back({"load", "mark", 0, 1, 3});
  in.phases.push_back({"train", "mark", 0, 3, 9});
  in.phases.push_back({"load", "mark", 0, 9, 9.5});
  in.phase_gpu_j = {{"load", 300.0}, {"train", 4000.0}};
  const auto n = node_energy(in);
  ASSERT_EQ(n->phases.size(), 2U);
  EXPECT_EQ(n->phases[0].name, "load");
  EXPECT_NEAR(*n->phases[0].cpu_j, 180 * 2.5, 1e-9);
  EXPECT_NEAR(*n->phases[0].dram_j, 20 * 2.5, 1e-9);
  EXPECT_NEAR(*n->phases[0].total_j, 300 + 200 * 2.5, 1e-9);
  EXPECT_NEAR(*n->phases[1].total_j, 4000 + 200 * 6.0, 1e-9);
}

TEST(NodeEnergy, RanksSharingANodeCountItOnceAndNodesAdd) {
  NodeEnergyInput in;
  in.domains.push_back(steady("n1", 0, 0, "package", true, 100, 10));
  in.domains.push_back(steady("n1", 1, 0, "package", true, 100, 10));  // rank 1, same node
  in.domains.push_back(steady("n2", 2, 0, "package", true, 50, 10));
  in.window_end_s = 10;
  const auto n = node_energy(in);
  EXPECT_DOUBLE_EQ(*n->cpu_j, 1000 + 500);
  ASSERT_EQ(n->notes.size(), 1U);
  EXPECT_NE(n->notes[0].find("n1"), std::string::npos);
}

TEST(NodeEnergy, TheJobsShareIsItsCgroupsCpuTimeOverTheNodes) {
  NodeEnergyInput in = two_sockets();
  NodeCpuShareInput times{"n1", 0, {}};
  times.times.push_back({kWall0, 0, "/job", 1'000'000, 10'000'000, 40'000'000});
  times.times.push_back({kWall0, 0, "/job", 4'000'000, 22'000'000, 80'000'000});
  in.cpu_times.push_back(times);
  const auto n = node_energy(in);
  ASSERT_TRUE(n->job_share);
  EXPECT_DOUBLE_EQ(*n->job_share, 0.25);  // 3 s of 12 s
  EXPECT_DOUBLE_EQ(*n->job_cpu_dram_j, 0.25 * 2000);
  // A reading without the cgroup's time gives no estimate, never a zero.
  in.cpu_times[0].times[1].cgroup_usage_usec.reset();
  EXPECT_FALSE(node_energy(in)->job_share);
}

TEST(NodeEnergy, NoDomainsNoFigures) {
  EXPECT_FALSE(node_energy({}));
}

}  // namespace
}  // namespace gpuscope::analyze
