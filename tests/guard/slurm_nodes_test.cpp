// sinfo's node lines (--Node --format=%N|%R|%T) as Slurm 22.05 and later print them: the long
// states with their suffixes, a node in two partitions, lines that are not of that form.
#include "guard/slurm_nodes.hpp"

#include <gtest/gtest.h>

namespace gpuscope::guard {
namespace {

TEST(SlurmNodes, StatesAndPartitions) {
  const SinfoRead read = read_sinfo(
      "n1|gpu|idle\n"
      "n2|gpu|drained\n"
      "n2|long|drained\n"
      "n3|gpu|draining\n"
      "n4|gpu|down*\n"
      "n5|gpu|mixed~\n"
      "n6|gpu|allocated\r\n"
      "n7|gpu|idle+drain\n"
      "n8|gpu|fail\n"
      "n9|gpu|planned\n"
      "\n");
  ASSERT_EQ(read.nodes.size(), 9u);
  EXPECT_EQ(read.unreadable_count, 0u);
  std::map<std::string, const SlurmNode*> by;
  for (const auto& n : read.nodes) by[n.name] = &n;
  EXPECT_FALSE(by["n1"]->drained);
  EXPECT_TRUE(by["n2"]->drained);
  EXPECT_EQ(by["n2"]->partitions, (std::vector<std::string>{"gpu", "long"}));
  EXPECT_TRUE(by["n3"]->drained);
  EXPECT_TRUE(by["n4"]->drained);
  EXPECT_FALSE(by["n5"]->drained);  // powered down: still in service
  EXPECT_FALSE(by["n6"]->drained);
  EXPECT_TRUE(by["n7"]->drained);
  EXPECT_TRUE(by["n8"]->drained);
  EXPECT_FALSE(by["n9"]->drained);
}

TEST(SlurmNodes, LinesOfAnotherFormAreQuotedNotGuessed) {
  const SinfoRead read = read_sinfo(
      "NODELIST PARTITION STATE\n"
      "n1|gpu|idle\n"
      "n2 gpu idle\n"
      "n3|gpu\n"
      "n4|g;pu|idle\n"
      "n5|gpu|idle|extra\n"
      "$(reboot)|gpu|idle\n");
  ASSERT_EQ(read.nodes.size(), 1u);
  EXPECT_EQ(read.nodes[0].name, "n1");
  EXPECT_EQ(read.unreadable_count, 6u);
  EXPECT_EQ(read.unreadable.size(), 5u);
  EXPECT_EQ(read.unreadable[1], "n2 gpu idle");
}

TEST(SlurmNodes, ArgumentsAskOneLinePerNodeAndPartition) {
  const auto args = sinfo_arguments();
  EXPECT_EQ(args, (std::vector<std::string>{"--Node", "--noheader", "--format=%N|%R|%T"}));
}

}  // namespace
}  // namespace gpuscope::guard
