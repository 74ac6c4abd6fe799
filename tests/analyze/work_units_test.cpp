// The --work-regex rule shared by analyze and sweep: the first group of a matching line.
#include "analyze/work_units.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace gpuscope::analyze {
namespace {

TEST(WorkUnits, FirstGroupOfAMatchingLine) {
  const auto regex = compile_work_regex("processed ([0-9.]+) samples");
  EXPECT_EQ(work_in_line(regex, "step 1/4: processed 250 samples"), 250.0);
  EXPECT_EQ(work_in_line(regex, "processed 1.5 samples, then processed 9 samples"), 1.5);
  EXPECT_EQ(work_in_line(regex, "throughput: 12 samples/s"), std::nullopt);
}

TEST(WorkUnits, AGroupThatIsNotANumberIsNoWork) {
  const auto regex = compile_work_regex("processed (\\S+) samples");
  EXPECT_EQ(work_in_line(regex, "processed many samples"), std::nullopt);
}

TEST(WorkUnits, BadPatternsSayHowToWriteOne) {
  try {
    compile_work_regex("no group");
    FAIL() << "a pattern without a group was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no group"), std::string::npos) << e.what();
  }
  EXPECT_THROW(compile_work_regex("bad ("), Error);
}

}  // namespace
}  // namespace gpuscope::analyze
