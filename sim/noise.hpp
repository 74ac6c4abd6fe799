// Deterministic noise: a pure function of (seed, GPU, bucket, metric), so two runs of a scenario,
// or two processes sharing one timeline, see identical values for the same 100 ms bucket.
#pragma once

#include <cstdint>

namespace gpuscope::sim {

// splitmix64's finaliser: a cheap, well-mixed 64-bit hash.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31U);
}

// Hashes a tuple of keys into one 64-bit value.
constexpr std::uint64_t hash_keys(std::uint64_t seed, std::uint64_t a, std::uint64_t b,
                                  std::uint64_t c) {
  return splitmix64(splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b) ^ c);
}

// A uniform double in [0, 1) from the top 53 bits of a hash.
constexpr double unit_uniform(std::uint64_t bits) {
  return static_cast<double>(bits >> 11U) * 0x1.0p-53;
}

// A normal-ish value with mean 0 and standard deviation 1, bounded to about ±3.46: the sum of
// four uniforms (Irwin-Hall), which is cheap and has no tails that would make a level negative.
constexpr double standard_noise(std::uint64_t seed, std::uint64_t gpu, std::uint64_t bucket,
                                std::uint64_t metric) {
  std::uint64_t state = hash_keys(seed, gpu, bucket, metric);
  double sum = 0.0;
  for (int i = 0; i < 4; ++i) {
    state = splitmix64(state);
    sum += unit_uniform(state);
  }
  constexpr double kStdDevOfSumOfFour = 0.57735026918962576;  // sqrt(4 / 12)
  return (sum - 2.0) / kStdDevOfSumOfFour;
}

}  // namespace gpuscope::sim
