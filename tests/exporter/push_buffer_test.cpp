// The push buffer: bounded memory, spilling to disk, order kept, nothing lost in a 60 s outage.
#include "exporter/push_buffer.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

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

// With no --push-spill-dir the spill files go to a private util::TemporaryFolder under
// $TMPDIR (0700, an unpredictable name), removed with them when the buffer goes, kept only when
// it holds the samples save_remaining() wrote.
class DefaultSpillFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("TMPDIR");
    had_ = old != nullptr;
    saved_ = had_ ? old : "";
    setenv("TMPDIR", tmp_.path().c_str(), 1);
  }
  void TearDown() override { had_ ? setenv("TMPDIR", saved_.c_str(), 1) : unsetenv("TMPDIR"); }
  std::vector<std::filesystem::path> folders() const {
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::directory_iterator(tmp_.path())) {
      found.push_back(entry.path());
    }
    return found;
  }
  gpuscope::testing::TempDir tmp_;
  bool had_ = false;
  std::string saved_;
};

TEST_F(DefaultSpillFolder, IsPrivateAndGoesWithTheBuffer) {
  std::vector<std::string> warnings;
  {
    PushBuffer buffer({batch(0, 20).size() + 10, 1ull << 30, {}},
                      [&](const std::string& w) { warnings.push_back(w); });
    for (std::uint64_t k = 0; k < 5; ++k) buffer.add(batch(k * 20, 20), 20);
    ASSERT_GT(buffer.stats().spilled_batches, 0u);
    const auto made = folders();
    ASSERT_EQ(made.size(), 1u);
    EXPECT_TRUE(made[0].filename().string().starts_with("gpuscope-push-")) << made[0];
    EXPECT_EQ(std::filesystem::status(made[0]).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_all);
    EXPECT_EQ(*buffer.front(), batch(0, 20));  // read back from its spill file
  }
  EXPECT_TRUE(folders().empty()) << "the spill folder outlived the buffer";
  EXPECT_TRUE(warnings.empty());
}

TEST_F(DefaultSpillFolder, StaysWhenItHoldsTheUndeliveredSamples) {
  std::vector<std::string> warnings;
  std::optional<std::filesystem::path> saved;
  {
    PushBuffer buffer({batch(0, 20).size() + 10, 1ull << 30, {}},
                      [&](const std::string& w) { warnings.push_back(w); });
    for (std::uint64_t k = 0; k < 5; ++k) buffer.add(batch(k * 20, 20), 20);
    saved = buffer.save_remaining("20261122T000000Z");
  }
  ASSERT_TRUE(saved);
  EXPECT_EQ(saved->parent_path().parent_path(), std::filesystem::path(tmp_.path()));
  std::string all;
  for (std::uint64_t k = 0; k < 5; ++k) all += batch(k * 20, 20);
  EXPECT_EQ(gpuscope::testing::read_file(saved->string()), all);
  EXPECT_TRUE(warnings.empty());
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
