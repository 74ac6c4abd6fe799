// core/regex_limits: user patterns past what std::regex handles safely are refused first
// (a long back-reference number overflowed libstdc++'s compiler: found by fuzz_text).
#include <gtest/gtest.h>

#include <string>

#include "core/regex_limits.hpp"

namespace gpuscope::testing {
namespace {

TEST(RegexLimits, OrdinaryPatternsPass) {
  for (const char* pattern : {"^step (\\d+) begin t=([0-9.]+)$", "a{2,5}", "(a)\\1", "x{1000}",
                              "\\\\12345", "tokens,100000", "tokens: ([0-9]+)"}) {
    EXPECT_FALSE(regex_past_limits(pattern)) << pattern;
  }
}

TEST(RegexLimits, HugeNumbersAndLengthsAreRefused) {
  EXPECT_TRUE(regex_past_limits("^step (\\d+G(\\4444444444444444444444comma"));
  EXPECT_TRUE(regex_past_limits("\\1001"));
  EXPECT_TRUE(regex_past_limits("a{1000000000}"));
  EXPECT_TRUE(regex_past_limits("a{1,99999}"));
  EXPECT_TRUE(regex_past_limits(std::string(1001, 'a')));
}

}  // namespace
}  // namespace gpuscope::testing
