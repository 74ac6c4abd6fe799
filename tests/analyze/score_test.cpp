#include "analyze/score.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpuscope::analyze {
namespace {

TEST(EfficiencyScore, HandComputedValue) {
  // A = 0.5, F = 0.2, O = 0.3:
  //   αA = 12.01083, σ − 0.5 = 0.4999939
  //   βF + γ·O·e^(−λF) = 0.618708 + 2.051028 · 0.3 · e^(−2.289256) (= 0.101332) = 0.681059,
  //   σ − 0.5 = 0.163980
  //   S = 4 · 0.4999939 · 0.163980 = 0.327949
  const auto score = efficiency_score(0.5, 0.2, 0.3);
  ASSERT_TRUE(score);
  EXPECT_NEAR(*score, 0.327949, 1e-6);
}

TEST(EfficiencyScore, MoreHandComputedValues) {
  // A = F = O = 1: 4 · (σ(24.02) − 0.5) · (σ(3.0935 + 2.0510 · e^(−11.446)) − 0.5)
  //   = 4 · 0.5 · 0.456626 = 0.913253.
  EXPECT_NEAR(*efficiency_score(1, 1, 1), 0.913253, 1e-6);
  // No FLOPs but occupancy: A = 0.1, O = 0.5: 4 · (σ(2.4022) − 0.5) · (σ(1.0255) − 0.5)
  //   = 4 · 0.416977 · 0.236056 = 0.393716.
  EXPECT_NEAR(*efficiency_score(0.1, 0, 0.5), 0.393716, 1e-6);
  // Active but neither computing nor occupied: the second factor is σ(0) − 0.5 = 0.
  EXPECT_EQ(*efficiency_score(1, 0, 0), 0);
  // Idle: the first factor is 0.
  EXPECT_EQ(*efficiency_score(0, 0.7, 0.7), 0);
}

TEST(EfficiencyScore, RangeAndMonotonicInActivity) {
  for (double a = 0; a <= 1.0; a += 0.1) {
    for (double f = 0; f <= 1.0; f += 0.1) {
      for (double o = 0; o <= 1.0; o += 0.1) {
        const auto score = efficiency_score(a, f, o);
        ASSERT_TRUE(score);
        EXPECT_GE(*score, 0);
        EXPECT_LT(*score, 1);
        EXPECT_LE(*score, *efficiency_score(a + 0.1, f, o));
      }
    }
  }
}

TEST(EfficiencyScore, NegativeReadsCountAsZero) {
  EXPECT_EQ(*efficiency_score(-0.01, 0.5, 0.5), 0);
  EXPECT_EQ(efficiency_score(0.5, -0.001, 0.3), efficiency_score(0.5, 0, 0.3));
}

TEST(EfficiencyScore, MissingInputsGiveNoScore) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(efficiency_score(kNaN, 0.5, 0.5));
  EXPECT_FALSE(efficiency_score(0.5, kNaN, 0.5));
  EXPECT_FALSE(efficiency_score(0.5, 0.5, kNaN));
  EXPECT_FALSE(efficiency_score(0.5, 0.5, std::numeric_limits<double>::infinity()));
}

TEST(EfficiencyScore, ParametersAreUsed) {
  ScoreParameters steep;
  steep.beta = 100;
  // σ(100 · 0.5 + …) − 0.5 ≈ 0.5, so S ≈ 4 · (σ(12.01) − 0.5) · 0.5 = 0.999988.
  EXPECT_NEAR(*efficiency_score(0.5, 0.5, 0.5, steep), 0.999988, 1e-6);
}

}  // namespace
}  // namespace gpuscope::analyze
