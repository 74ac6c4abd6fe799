// The push buffer: bounded memory, spilling to disk, order kept, nothing lost in a 60 s outage.
#include "export/push_buffer.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "support/temp_dir.hpp"

namespace gpuscope::exporter {
namespace {

// One batch as the pusher seals it each second: `gpus` GPUs × 35 series × `per_second` samples,
// each line numbered so order and completeness can be checked.
std::string batch(std::uint64_t first_line, std::uint64_t lines) {
  std::string body;
  for (std::uint64_t i = 0; i < lines; ++i) {
    body += fmt::format(
        "gpuscope_power_watts{{gpu=\"{}\",uuid=\"GPU-8f2c1a3b-0000-0000-0000-"
        "000000000000\",hostname=\"node1\"}} 612.4 {}\n",
        (first_line + i) % 8, 1'700'000'000'000 + first_line + i);
  }
  return body;
}

TEST(PushBufferTest, SixtySecondOutageAtEightGpusAndTenHertzLosesNothing) {
  gpuscope::testing::TempDir dir;
  std::vector<std::string> warnings;
  PushBuffer buffer({16u << 20, 1ull << 30, dir.file("spill")},
                    [&](const std::string& w) { warnings.push_back(w); });
  // The server is down for 60 s: one batch a second, 8 GPUs × 35 metrics × 10 samples/s.
  constexpr std::uint64_t kLinesPerSecond = 8 * 35 * 10;
  std::uint64_t bytes = 0;
  for (std::uint64_t second = 0; second < 60; ++second) {
    std::string body = batch(second * kLinesPerSecond, kLinesPerSecond);
    bytes += body.size();
    buffer.add(std::move(body), kLinesPerSecond);
    EXPECT_LE(buffer.stats().memory_bytes, 16u << 20);
  }
  EXPECT_GT(bytes, 16u << 20) << "the outage must be larger than memory for this test to mean much";
  EXPECT_GT(buffer.stats().spilled_batches, 0u);
  EXPECT_EQ(buffer.stats().lines, 60 * kLinesPerSecond);
  EXPECT_EQ(buffer.stats().dropped_lines, 0u);
  EXPECT_TRUE(warnings.empty());
  // The server is back: every batch comes out, in order, byte for byte.
  for (std::uint64_t second = 0; second < 60; ++second) {
    ASSERT_FALSE(buffer.empty());
    EXPECT_EQ(buffer.front_lines(), kLinesPerSecond);
    const auto body = buffer.front();
    ASSERT_TRUE(body);
    ASSERT_EQ(*body, batch(second * kLinesPerSecond, kLinesPerSecond)) << "batch " << second;
    buffer.pop();
  }
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.stats().disk_bytes, 0u);
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("spill")));
}

TEST(PushBufferTest, SaveRemainingWritesSpilledAndInMemoryBatchesInOrder) {
  gpuscope::testing::TempDir dir;
  std::vector<std::string> warnings;
  // Memory for about three batches: the older ones spill.
  PushBuffer buffer({3 * batch(0, 20).size() + 10, 1ull << 30, dir.file("spill")},
                    [&](const std::string& w) { warnings.push_back(w); });
  std::string all;
  for (std::uint64_t k = 0; k < 10; ++k) {
    std::string body = batch(k * 20, 20);
    all += body;
    buffer.add(std::move(body), 20);
  }
  ASSERT_GT(buffer.stats().spilled_batches, 0u);
  ASSERT_GT(buffer.stats().memory_bytes, 0u);
  const auto file = buffer.save_remaining("20261122T000000Z");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->filename(), "undelivered-20261122T000000Z.prom");
  EXPECT_EQ(gpuscope::testing::read_file(file->string()), all);
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.stats().lines, 0u);
  EXPECT_EQ(buffer.stats().disk_bytes, 0u);
  // Only the saved file is left in the spill directory.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.file("spill")))
    ++files;
  EXPECT_EQ(files, 1u);
  EXPECT_TRUE(warnings.empty());
  EXPECT_FALSE(buffer.save_remaining("again")) << "nothing left to save";
}

TEST(PushBufferTest, PastTheDiskLimitTheOldestAreDroppedAndCounted) {
  gpuscope::testing::TempDir dir;
  std::vector<std::string> warnings;
  const std::string one = batch(0, 100);
  // Room for two batches in memory and two on disk.
  PushBuffer buffer({2 * one.size(), 2 * one.size(), dir.file("spill")},
                    [&](const std::string& w) { warnings.push_back(w); });
  for (std::uint64_t k = 0; k < 6; ++k) buffer.add(batch(k * 100, 100), 100);
  EXPECT_EQ(buffer.stats().dropped_lines, 200u);
  EXPECT_EQ(buffer.stats().lines, 400u);
  ASSERT_EQ(warnings.size(), 1u);  // said once, not once per batch
  EXPECT_NE(warnings[0].find("dropping the oldest"), std::string::npos);
  EXPECT_EQ(*buffer.front(), batch(200, 100));  // the newest four survive, oldest first
}

TEST(PushBufferTest, WithoutAWritableSpillDirectoryItStaysBoundedInMemory) {
  std::vector<std::string> warnings;
  const std::string one = batch(0, 10);
  PushBuffer buffer({3 * one.size(), 1ull << 30, "/proc/gpuscope-cannot-create"},
                    [&](const std::string& w) { warnings.push_back(w); });
  for (std::uint64_t k = 0; k < 10; ++k) buffer.add(batch(k * 10, 10), 10);
  EXPECT_LE(buffer.stats().memory_bytes, 3 * one.size());
  EXPECT_EQ(buffer.stats().lines + buffer.stats().dropped_lines, 100u);
  EXPECT_GE(warnings.size(), 1u);
}

}  // namespace
}  // namespace gpuscope::exporter
