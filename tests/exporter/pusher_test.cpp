// The pusher against a scripted transport: batches, retries through an outage, rejections.
#include "exporter/pusher.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "sample_rows.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::exporter {
namespace {

using testing::gpu;
using testing::row;

// Refuses the first `failures` posts (as a server that is down), then takes everything.
class ScriptedTransport : public PushTransport {
 public:
  explicit ScriptedTransport(int failures, PushResult::Outcome failure = PushResult::Outcome::Retry)
      : failures_(failures), failure_(failure) {}
  PushResult post(const std::string& body) override {
    std::lock_guard lock(mutex_);
    ++posts;
    if (failures_ > 0) {
      --failures_;
      return {failure_, "connection refused"};
    }
    received += body;
    return {PushResult::Outcome::Delivered, {}};
  }
  std::string destination() const override { return "http://test/api/v1/import/prometheus"; }

  std::mutex mutex_;
  std::string received;
  int posts = 0;

 private:
  int failures_;
  PushResult::Outcome failure_;
};

PusherOptions fast() {
  PusherOptions o;
  o.batch_interval = std::chrono::milliseconds(10);
  o.backoff_initial = std::chrono::milliseconds(1);
  o.backoff_max = std::chrono::milliseconds(5);
  return o;
}

std::string expected_lines(const Exposition& exposition, int rows) {
  std::string out;
  for (int k = 0; k < rows; ++k) exposition.append_lines(row(0, (k + 1) * 1'000'000'000LL, k), out);
  return out;
}

TEST(PusherTest, DeliversEverySampleOnceAndInOrderThroughAnOutage) {
  const Exposition exposition(Naming::Gpuscope, {"h", {}, ""}, {gpu(0)});
  auto transport = std::make_unique<ScriptedTransport>(25);
  ScriptedTransport* t = transport.get();
  std::vector<std::string> log;
  std::mutex log_mutex;
  Pusher pusher(std::move(transport), exposition, fast(), [&](const std::string& line) {
    std::lock_guard lock(log_mutex);
    log.push_back(line);
  });
  pusher.start();
  for (int k = 0; k < 200; ++k) {
    pusher.on_sample(row(0, (k + 1) * 1'000'000'000LL, k));
    if (k % 20 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const PushSummary summary = pusher.finish(std::chrono::seconds(30));
  EXPECT_EQ(summary.lines_sent, 200u * 5u);
  EXPECT_EQ(summary.lines_pending, 0u);
  EXPECT_EQ(summary.lines_dropped, 0u);
  std::lock_guard lock(t->mutex_);
  EXPECT_EQ(t->received, expected_lines(exposition, 200));
  EXPECT_GE(t->posts, 26);
  std::lock_guard log_lock(log_mutex);
  ASSERT_GE(log.size(), 2u);
  EXPECT_NE(log.front().find("cannot deliver to http://test"), std::string::npos) << log.front();
  EXPECT_NE(log.back().find("takes samples again"), std::string::npos) << log.back();
}

TEST(PusherTest, RejectedBatchesAreDroppedAndCounted) {
  const Exposition exposition(Naming::Gpuscope, {"h", {}, ""}, {gpu(0)});
  auto transport = std::make_unique<ScriptedTransport>(1, PushResult::Outcome::Rejected);
  std::vector<std::string> log;
  Pusher pusher(std::move(transport), exposition, fast(),
                [&](const std::string& line) { log.push_back(line); });
  pusher.on_sample(row(0, 1'000'000'000, 1));
  const PushSummary summary =
      pusher.finish(std::chrono::seconds(10));  // never started: finish sends
  EXPECT_EQ(summary.lines_dropped, 5u);
  EXPECT_EQ(summary.lines_sent, 0u);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("rejected"), std::string::npos);
}

TEST(PusherTest, FinishGivesUpAtItsDeadlineAndCountsWhatIsLeft) {
  const Exposition exposition(Naming::Gpuscope, {"h", {}, ""}, {gpu(0)});
  auto transport = std::make_unique<ScriptedTransport>(1'000'000);
  PusherOptions o = fast();
  o.backoff_max = std::chrono::milliseconds(20);
  Pusher pusher(std::move(transport), exposition, o, [](const std::string&) {});
  for (int k = 0; k < 3; ++k) pusher.on_sample(row(0, (k + 1) * 1'000'000'000LL, k));
  const PushSummary summary = pusher.finish(std::chrono::milliseconds(200));
  EXPECT_EQ(summary.lines_sent, 0u);
  EXPECT_EQ(summary.lines_pending, 15u);
  EXPECT_EQ(summary.lines_saved, 0u);
  EXPECT_TRUE(summary.saved_file.empty());
}

TEST(PusherTest, WhatCannotBeDeliveredIsSavedWhenAsked) {
  gpuscope::testing::TempDir dir;
  const Exposition exposition(Naming::Gpuscope, {"h", {}, ""}, {gpu(0)});
  PusherOptions o = fast();
  o.backoff_max = std::chrono::milliseconds(20);
  o.buffer.spill_dir = dir.file("spill");
  o.save_undelivered = true;
  Pusher pusher(std::make_unique<ScriptedTransport>(1'000'000), exposition, o,
                [](const std::string&) {});
  for (int k = 0; k < 3; ++k) pusher.on_sample(row(0, (k + 1) * 1'000'000'000LL, k));
  const PushSummary summary = pusher.finish(std::chrono::milliseconds(200));
  EXPECT_EQ(summary.lines_sent, 0u);
  EXPECT_EQ(summary.lines_pending, 0u);
  EXPECT_EQ(summary.lines_saved, 15u);
  EXPECT_EQ(summary.destination, "http://test/api/v1/import/prometheus");
  ASSERT_FALSE(summary.saved_file.empty());
  EXPECT_EQ(summary.saved_file.parent_path(), dir.file("spill"));
  EXPECT_EQ(gpuscope::testing::read_file(summary.saved_file.string()),
            expected_lines(exposition, 3));
}

}  // namespace
}  // namespace gpuscope::exporter
