// node/node_sampler and node/cpu_time over made-up trees: two sockets' RAPL zones and GH200
// meters numbered together and stored with what they add to, joules since the first read across a
// wrap, a meter's power integrated, problems said once with their domain's number; the job's
// cgroup and the node's CPU time parsed from cpu.stat and /proc/stat.
#include "node/node_sampler.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

#include "fake_sysfs.hpp"
#include "node/cpu_time.hpp"

namespace gpuscope::node {
namespace {

using testing::FakeSysfs;
using testing::FaultyReader;

const NodeEnergyDomain* find(const std::vector<NodeEnergyDomain>& all, const std::string& name) {
  for (const auto& d : all) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

TEST(NodeSampler, NumbersZonesThenMetersWithWhatTheyAddTo) {
  FakeSysfs sysfs;
  sysfs.zone("intel-rapl:0", "package-0", 1000);
  sysfs.zone("intel-rapl:0:0", "core", 10);
  sysfs.zone("intel-rapl:0:1", "dram", 20, 65712999613ULL);
  sysfs.zone("intel-rapl:1", "package-1", 3000);
  sysfs.meter(1, "Module Power Socket 0", 612'000'000);
  sysfs.meter(2, "Grace Power Socket 0", 98'000'000);
  sysfs.meter(3, "CPU Power Socket 0", 61'000'000);
  NodeEnergySampler sampler(sysfs.root());
  const auto& domains = sampler.domains();
  ASSERT_EQ(domains.size(), 7U);
  for (unsigned i = 0; i < domains.size(); ++i) EXPECT_EQ(domains[i].domain, i);
  EXPECT_EQ(domains[0].source, kNodeSourcePowercap);
  EXPECT_TRUE(find(domains, "package-0")->additive);
  EXPECT_TRUE(find(domains, "package-1")->additive);
  EXPECT_EQ(find(domains, "package-1")->socket, 1U);
  EXPECT_TRUE(find(domains, "dram")->additive);
  EXPECT_EQ(find(domains, "dram")->max_range_uj, 65712999613ULL);
  EXPECT_FALSE(find(domains, "core")->additive) << "inside its package";
  const auto* module = find(domains, "Module Power Socket 0");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->source, kNodeSourceGraceHwmon);
  EXPECT_EQ(module->zone, "hwmon1/power1");
  EXPECT_TRUE(module->includes_gpu);
  EXPECT_FALSE(module->additive) << "the module includes the GPU";
  EXPECT_TRUE(find(domains, "Grace Power Socket 0")->additive);
  EXPECT_FALSE(find(domains, "CPU Power Socket 0")->additive) << "inside the Grace socket";
}

TEST(NodeSampler, ARailIsAddedWhereItsSocketHasNoMeter) {
  FakeSysfs sysfs;
  sysfs.meter(1, "CPU Power Socket 0", 61'000'000);
  sysfs.meter(2, "SysIO Power Socket 0", 19'000'000);
  NodeEnergySampler sampler(sysfs.root());
  ASSERT_EQ(sampler.domains().size(), 2U);
  EXPECT_TRUE(sampler.domains()[0].additive);
  EXPECT_TRUE(sampler.domains()[1].additive);
}

TEST(NodeSampler, JoulesSinceTheFirstReadAcrossAWrapAndAMeterIntegrated) {
  FakeSysfs sysfs;
  sysfs.zone("intel-rapl:0", "package-0", 9'000'000, 10'000'000);  // wraps at 10 J
  sysfs.meter(1, "Grace Power Socket 0", 100'000'000);             // 100 W
  NodeEnergySampler sampler(sysfs.root());
  std::vector<NodeEnergySample> first, second;
  sampler.read(first);
  ASSERT_EQ(first.size(), 2U);
  EXPECT_EQ(first[0].joules, 0.0);
  EXPECT_EQ(first[0].power_w, std::nullopt);
  EXPECT_EQ(first[1].joules, 0.0);
  EXPECT_EQ(first[1].power_w, 100.0);
  sysfs.energy("intel-rapl:0", 2'500'000);  // wrapped: 1 J to the top, then 2.5 J
  sysfs.write("class/hwmon/hwmon1/device/power1_average", "300000000\n");  // 300 W
  usleep(20'000);
  sampler.read(second);
  ASSERT_EQ(second.size(), 2U);
  EXPECT_DOUBLE_EQ(second[0].joules, 3.5);
  const double seconds = static_cast<double>(second[1].mono_ns - first[1].mono_ns) / 1e9;
  EXPECT_NEAR(second[1].joules, 200.0 * seconds, 1e-9) << "trapezoid of 100 W and 300 W";
  EXPECT_EQ(second[1].domain, 1U);
  EXPECT_TRUE(sampler.take_problems().empty());
}

TEST(NodeSampler, ProblemsNameTheirDomainOnceAndReadingsGoOn) {
  FakeSysfs sysfs;
  sysfs.zone("intel-rapl:0", "package-0", 1000);
  sysfs.zone("intel-rapl:1", "package-1", 1000);
  sysfs.meter(1, "Grace Power Socket 0", 100'000'000);
  FaultyReader faults;
  NodeEnergySampler sampler(sysfs.root(), faults.reader());
  faults.fail((sysfs.powercap() / "intel-rapl:1/energy_uj").string(), EACCES);
  faults.fail((sysfs.root() / "class/hwmon/hwmon1/device/power1_average").string(), EIO);
  std::vector<NodeEnergySample> out;
  sampler.read(out);
  sampler.read(out);
  ASSERT_EQ(out.size(), 2U) << "package-0 twice, nothing of the others";
  const auto problems = sampler.take_problems();
  ASSERT_EQ(problems.size(), 2U);
  EXPECT_EQ(problems[0].domain, 1U);
  EXPECT_EQ(problems[0].kind, ProblemKind::PermissionDenied);
  EXPECT_NE(problems[0].message.find("run gpuscope as root"), std::string::npos);
  EXPECT_EQ(problems[1].domain, 2U);
  EXPECT_EQ(problems[1].kind, ProblemKind::Unreadable);
}

TEST(CpuTime, ParsesProcStatAndCpuStat) {
  // user nice system idle iowait irq softirq steal guest guest_nice, at 100 ticks a second.
  const auto times = parse_proc_stat("cpu  100 20 30 800 50 5 5 10 40 0\ncpu0 1 2 3\n", 100);
  ASSERT_TRUE(times);
  EXPECT_EQ(times->busy_usec, (100 + 20 + 30 + 5 + 5 + 10) * 10'000);
  EXPECT_EQ(times->total_usec, (100 + 20 + 30 + 800 + 50 + 5 + 5 + 10) * 10'000);
  EXPECT_FALSE(parse_proc_stat("intr 1 2 3\n", 100));
  EXPECT_FALSE(parse_proc_stat("cpu 1 2\n", 100));
  EXPECT_EQ(parse_cpu_stat_usage("usage_usec 123456\nuser_usec 100000\n"), 123456);
  EXPECT_EQ(parse_cpu_stat_usage("user_usec 1\n"), std::nullopt);
}

TEST(CpuTime, ReadsTheJobsCgroupUnderTheRoots) {
  FakeSysfs sysfs;  // one tree holds both roots: <root>/proc and <root>/sys
  sysfs.write("proc/self/cgroup", "12:cpuset:/\n0::/job.slice/job_7\n");
  sysfs.write("proc/stat", "cpu  100 0 100 800 0 0 0 0 0 0\n");
  sysfs.write("sys/fs/cgroup/job.slice/job_7/cpu.stat", "usage_usec 1500000\nuser_usec 1\n");
  const auto proc = sysfs.root() / "proc";
  const auto cgroup = cgroup_of(4242, proc);  // no <proc>/4242: gpuscope's own
  ASSERT_EQ(cgroup, "/job.slice/job_7");
  const NodeCpuTime t = read_cpu_time(cgroup, sysfs.root() / "sys", proc);
  EXPECT_EQ(t.cgroup_usage_usec, 1'500'000);
  const long hz = sysconf(_SC_CLK_TCK);
  EXPECT_EQ(t.node_busy_usec, 200 * 1'000'000 / hz);
  EXPECT_EQ(t.node_total_usec, 1000 * 1'000'000 / hz);
  EXPECT_GT(t.mono_ns, 0);
  const NodeCpuTime none = read_cpu_time(std::nullopt, sysfs.root() / "nowhere", sysfs.root());
  EXPECT_EQ(none.cgroup_usage_usec, std::nullopt);
  EXPECT_EQ(none.node_busy_usec, std::nullopt) << "unreadable stays unknown, never 0";
}

}  // namespace
}  // namespace gpuscope::node
