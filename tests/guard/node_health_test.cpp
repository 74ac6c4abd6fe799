// Broken GPUs and the drains guard may do: the Xids the rules list (not others), uncorrected ECC,
// remap failures, a GPU lost while its node's others report (not a node gone quiet), and the
// caps: nodes already out of service, the cycle's limit, a partition's share.
#include "guard/node_health.hpp"

#include <gtest/gtest.h>

namespace gpuscope::guard {
namespace {

GpuHealth gpu(const std::string& node, const std::string& name) {
  GpuHealth g;
  g.node = node;
  g.gpu = name;
  g.xid_last = 0;
  g.xid_events = 0;
  g.uncorrected_ecc = 0;
  g.remap_failure = 0;
  g.remap_pending = 0;
  return g;
}

TEST(NodeHealth, TheFaultsThatDrain) {
  const HealthRule rule;
  std::vector<GpuHealth> gpus = {gpu("n1", "GPU-1"), gpu("n2", "GPU-2"), gpu("n3", "GPU-3"),
                                 gpu("n4", "GPU-4"), gpu("n5", "GPU-5"), gpu("n6", "GPU-6")};
  gpus[0].xid_last = 79;  // fallen off the bus
  gpus[0].xid_events = 1;
  gpus[1].xid_last = 13;  // an application's fault: not a broken GPU
  gpus[1].xid_events = 3;
  gpus[2].uncorrected_ecc = 2;
  gpus[3].remap_failure = 1;
  gpus[4].remap_pending = 1;  // advice by default, not a drain
  gpus[5].xid_last = 79;      // an old Xid, none within the window
  const auto faults = node_faults(rule, gpus);
  ASSERT_EQ(faults.size(), 3u);
  EXPECT_EQ(faults[0].node, "n1");
  EXPECT_NE(faults[0].reason.find("gpuscope: Xid 79"), std::string::npos) << faults[0].reason;
  EXPECT_NE(faults[0].reason.find("GPU-1"), std::string::npos);
  EXPECT_EQ(faults[1].node, "n3");
  EXPECT_NE(faults[1].reason.find("2 uncorrected ECC errors"), std::string::npos);
  EXPECT_EQ(faults[2].node, "n4");
  HealthRule pending = rule;
  pending.row_remap_pending = true;
  EXPECT_EQ(node_faults(pending, gpus).size(), 4u);
}

TEST(NodeHealth, ALostGpuIsNotANodeGoneQuiet) {
  const HealthRule rule;
  std::vector<GpuHealth> gpus = {gpu("n1", "GPU-1"), gpu("n1", "GPU-2"), gpu("n2", "GPU-3"),
                                 gpu("n2", "GPU-4")};
  gpus[1].reporting = false;  // n1's other GPU goes on: GPU-2 is lost
  gpus[2].reporting = false;  // all of n2 quiet: the exporter's or the node's outage
  gpus[3].reporting = false;
  const auto faults = node_faults(rule, gpus);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].node, "n1");
  EXPECT_NE(faults[0].reason.find("GPU-2 stopped reporting"), std::string::npos);
}

TEST(NodeHealth, DrainsAreCapped) {
  HealthRule rule;
  rule.max_drained_share = 0.25;
  std::vector<SlurmNode> nodes;
  for (int i = 1; i <= 8; ++i) nodes.push_back({"n" + std::to_string(i), {"gpu"}, false});
  nodes[7].drained = true;  // n8: out of service already
  const std::vector<NodeFault> faults = {{"n1", "gpuscope: a"},
                                         {"n2", "gpuscope: b"},
                                         {"n3", "gpuscope: c"},
                                         {"n8", "gpuscope: d"},
                                         {"n9", "gpuscope: e"}};
  const DrainPlan plan = plan_drains(rule, 10, faults, nodes);
  ASSERT_EQ(plan.drain.size(), 1u);  // 2 of 8 may be out: n8 and one more
  EXPECT_EQ(plan.drain[0].node, "n1");
  ASSERT_EQ(plan.already.size(), 1u);
  EXPECT_EQ(plan.already[0].node, "n8");
  ASSERT_EQ(plan.held.size(), 3u);
  EXPECT_NE(plan.held[0].second.find("2 of 8 nodes out of service"), std::string::npos)
      << plan.held[0].second;
  EXPECT_EQ(plan.held[2].second, "sinfo does not know this node");
  rule.max_drained_share = 1;
  EXPECT_EQ(plan_drains(rule, 2, faults, nodes).drain.size(), 2u);  // the cycle's limit
}

}  // namespace
}  // namespace gpuscope::guard
