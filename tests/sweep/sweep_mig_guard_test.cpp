// When a sweep may change the settings of a GPU in MIG mode (sweep/mig_guard.hpp).
#include <gtest/gtest.h>

#include "sweep/mig_guard.hpp"

namespace gpuscope::sweep {
namespace {

MigInstanceUse instance(unsigned id, const char* profile, bool selected,
                        std::vector<std::string> others = {}) {
  return {id, profile, selected, std::move(others)};
}

TEST(SweepMigGuard, AGpuOutOfMigModeMayBeSwept) {
  EXPECT_FALSE(mig_refusal({0, false, {}}));
}

TEST(SweepMigGuard, AGpuWhoseInstancesAreAllTheJobsMayBeSwept) {
  EXPECT_FALSE(
      mig_refusal({1, true, {instance(1, "4g.40gb", true), instance(5, "2g.20gb", true)}}));
  EXPECT_FALSE(mig_refusal({1, true, {}})) << "MIG on, no instance: nobody else is on it";
}

TEST(SweepMigGuard, AnInstanceTheJobDoesNotHoldIsARefusalThatNamesIt) {
  const auto why = mig_refusal({2,
                                true,
                                {instance(9, "1g.10gb", true), instance(1, "4g.40gb", false),
                                 instance(5, "2g.20gb", false)}});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("GPU 2 is in MIG mode and this job holds 1 of its 3 instances "
                      "(GI 9 (1g.10gb))"),
            std::string::npos)
      << *why;
  EXPECT_NE(why->find("GI 1 (4g.40gb) and GI 5 (2g.20gb)"), std::string::npos) << *why;
  EXPECT_NE(why->find("sweep a whole GPU"), std::string::npos);
}

TEST(SweepMigGuard, AnotherUsersProcessOnAHeldInstanceIsARefusal) {
  const auto why = mig_refusal(
      {0, true, {instance(1, "4g.40gb", true, {"bob"}), instance(5, "", true, {"carol", "bob"})}});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("processes of bob and carol run on its instances"), std::string::npos)
      << *why;
}

}  // namespace
}  // namespace gpuscope::sweep
