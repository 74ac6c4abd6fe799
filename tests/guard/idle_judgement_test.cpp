// The idle verdicts: a streak grows across cycles and earns the first warning, the second and
// the cancel in order, each once; a busy window ends it; a window with too few samples never
// counts as idle; exemptions, interactive limits and the notice before a cancel; GPUs too large.
#include "guard/idle_judgement.hpp"

#include <gtest/gtest.h>

namespace gpuscope::guard {
namespace {

constexpr std::int64_t kMinute = 60'000;
constexpr std::int64_t kStart = 1'795'948'800'000;

RunningJob job(int gpus = 4) {
  RunningJob j;
  j.id = "100";
  j.shown_id = "100";
  j.user = "alice";
  j.account = "physics";
  j.partition = "gpu";
  j.qos = "normal";
  j.name = "train";
  j.start_ms = kStart;
  j.gpus = gpus;
  j.nodes = {"n1"};
  return j;
}

fleet::GpuAggregate gpu(double samples, double idle_share, double util = 0) {
  fleet::GpuAggregate g;
  g.samples = samples;
  g.idle_share = idle_share;
  g.util_pct = util;
  return g;
}

// A window of `minutes` ending at `to_ms` in which `idle` of `gpus` GPUs are idle throughout
// (30 s samples, all present).
WindowFigures window(std::int64_t from_ms, std::int64_t to_ms, int gpus, int idle) {
  std::vector<fleet::GpuAggregate> found;
  const double samples = static_cast<double>(to_ms - from_ms) / 30'000.0;
  for (int i = 0; i < gpus; ++i) found.push_back(gpu(samples, i < idle ? 1.0 : 0.4, 30));
  return window_figures(found, gpus, from_ms, to_ms, 30);
}

// Runs cycles every 5 minutes from `from_min` to `to_min` after the start, all GPUs idle, and
// returns each step taken with the minute it came at.
std::vector<std::pair<int, Step>> cycles(const IdleRule& rule, const RunningJob& j,
                                         JobMemory& memory, int from_min, int to_min) {
  std::vector<std::pair<int, Step>> taken;
  for (int minute = from_min; minute <= to_min; minute += 5) {
    const std::int64_t now = kStart + minute * kMinute;
    const std::int64_t from = window_start(rule, j, memory, now, 20 * kMinute);
    const IdleVerdict v = judge_idle(rule, j, memory, window(from, now, j.gpus, j.gpus), now);
    memory = v.memory;
    if (v.step == Step::None) continue;
    taken.emplace_back(minute, v.step);
    if (v.step == Step::FirstWarning) memory.first_warning_ms = now;
    if (v.step == Step::SecondWarning) memory.second_warning_ms = now;
    if (v.step == Step::Cancel) memory.cancelled_ms = now;
  }
  return taken;
}

TEST(IdleJudgement, AnIdleJobIsWarnedTwiceThenCancelledEachOnce) {
  const IdleRule rule;  // 60, 105, 120 minutes
  JobMemory memory;
  const auto taken = cycles(rule, job(), memory, 5, 130);
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0], std::make_pair(60, Step::FirstWarning));
  EXPECT_EQ(taken[1], std::make_pair(105, Step::SecondWarning));
  EXPECT_EQ(taken[2], std::make_pair(120, Step::Cancel));
}

TEST(IdleJudgement, AJobFoundLongIdleGetsItsNoticeBeforeTheCancel) {
  const IdleRule rule;
  JobMemory memory;
  // guard starts when the job has idled for 5 hours: the first window reaches back 2 hours.
  const auto taken = cycles(rule, job(), memory, 300, 340);
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0], std::make_pair(300, Step::FirstWarning));
  EXPECT_EQ(taken[1], std::make_pair(305, Step::SecondWarning));
  EXPECT_EQ(taken[2], std::make_pair(320, Step::Cancel));  // 15 minutes' notice
}

TEST(IdleJudgement, ABusyWindowEndsTheStreak) {
  const IdleRule rule;
  const RunningJob j = job();
  JobMemory memory;
  std::int64_t now = kStart + 80 * kMinute;
  IdleVerdict v = judge_idle(rule, j, memory, window(kStart, now, 4, 4), now);
  EXPECT_EQ(v.activity, Activity::Idle);
  EXPECT_EQ(v.idle_s, 80 * 60);
  EXPECT_EQ(v.step, Step::FirstWarning);
  memory = v.memory;
  memory.first_warning_ms = now;
  const std::int64_t later = now + 5 * kMinute;
  v = judge_idle(rule, j, memory, window(now, later, 4, 3), later);  // one GPU woke up
  EXPECT_EQ(v.activity, Activity::Busy);
  EXPECT_FALSE(v.memory.idle_since_ms);
  EXPECT_EQ(v.step, Step::None);
}

TEST(IdleJudgement, TooFewSamplesNeverCountAsIdle) {
  const IdleRule rule;
  const RunningJob j = job(2);
  const std::int64_t now = kStart + 130 * kMinute;
  std::vector<fleet::GpuAggregate> sparse = {gpu(20, 1.0), gpu(20, 1.0)};  // of 260 promised
  IdleVerdict v = judge_idle(rule, j, {}, window_figures(sparse, 2, kStart, now, 30), now);
  EXPECT_EQ(v.activity, Activity::Unknown);
  EXPECT_EQ(v.step, Step::None);
  EXPECT_NE(v.why.find("too few samples"), std::string::npos);
  // A GPU the server has nothing of is not idle either.
  std::vector<fleet::GpuAggregate> one = {gpu(260, 1.0)};
  v = judge_idle(rule, j, {}, window_figures(one, 2, kStart, now, 30), now);
  EXPECT_EQ(v.activity, Activity::Unknown);
}

TEST(IdleJudgement, TheShareOfGpusDecides) {
  IdleRule rule;
  rule.gpu_share = 0.75;
  const RunningJob j = job(8);
  const std::int64_t now = kStart + 70 * kMinute;
  EXPECT_EQ(judge_idle(rule, j, {}, window(kStart, now, 8, 6), now).activity, Activity::Idle);
  EXPECT_EQ(judge_idle(rule, j, {}, window(kStart, now, 8, 5), now).activity, Activity::Busy);
}

TEST(IdleJudgement, ExemptionsAndYoungJobsAreLeftAlone) {
  IdleRule rule;
  rule.exempt.users = {"alice"};
  const std::int64_t now = kStart + 200 * kMinute;
  IdleVerdict v = judge_idle(rule, job(), {}, window(kStart, now, 4, 4), now);
  ASSERT_TRUE(v.skipped);
  EXPECT_EQ(*v.skipped, "user alice is exempt");
  EXPECT_EQ(v.step, Step::None);
  rule.exempt.users.clear();
  rule.partitions = {"llm"};
  EXPECT_EQ(*exemption(rule, job(), now), "partition gpu is not watched");
  rule.partitions.clear();
  EXPECT_TRUE(exemption(rule, job(), kStart + 30 * kMinute));  // younger than min_age
  EXPECT_FALSE(exemption(rule, job(), now));
}

TEST(IdleJudgement, InteractiveJobsHaveTheirOwnSteps) {
  const IdleRule rule;  // interactive: warned at 60 minutes, never cancelled
  RunningJob j = job(1);
  j.name = "sys/dashboard/jupyter";
  EXPECT_TRUE(is_interactive(rule, j));
  JobMemory memory;
  auto taken = cycles(rule, j, memory, 5, 400);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0], std::make_pair(60, Step::FirstWarning));
  RunningJob salloc = job(1);
  salloc.batch = false;
  EXPECT_TRUE(is_interactive(rule, salloc));
  EXPECT_FALSE(is_interactive(rule, job(1)));
}

TEST(IdleJudgement, AGapInTheChecksStartsTheWindowOver) {
  const IdleRule rule;
  JobMemory memory;
  memory.checked_until_ms = kStart + 10 * kMinute;
  memory.idle_since_ms = kStart;
  const std::int64_t now = kStart + 100 * kMinute;
  // 90 minutes since the last check: longer than the gap allowed, so back the longest step.
  EXPECT_EQ(window_start(rule, job(), memory, now, 20 * kMinute), kStart);
  EXPECT_EQ(window_start(rule, job(), memory, kStart + 15 * kMinute, 20 * kMinute),
            kStart + 10 * kMinute);
  // A cycle soon after the last (a restart) still reaches back a few scrapes.
  EXPECT_EQ(window_start(rule, job(), memory, kStart + 10 * kMinute + 5'000, 20 * kMinute, 90'000),
            kStart + 10 * kMinute + 5'000 - 90'000);
}

TEST(IdleJudgement, AGpuTooLargeForItsJob) {
  TooLargeRule rule;
  fleet::GpuAggregate g = gpu(100, 0.5, 10);
  g.memory_peak_bytes = 8e9;
  g.memory_total_bytes = 80e9;
  const std::vector<fleet::GpuAggregate> gpus = {g};
  const auto advice = judge_too_large(rule, job(1), gpus, kStart + 90 * kMinute);
  ASSERT_TRUE(advice);
  EXPECT_NE(advice->find("10 % of their memory"), std::string::npos) << *advice;
  EXPECT_FALSE(judge_too_large(rule, job(1), gpus, kStart + 30 * kMinute));  // too early
  g.memory_peak_bytes = 40e9;
  const std::vector<fleet::GpuAggregate> fuller = {g};
  EXPECT_FALSE(judge_too_large(rule, job(1), fuller, kStart + 90 * kMinute));
  g.memory_total_bytes.reset();  // nothing to compare with: no advice, never a guess
  const std::vector<fleet::GpuAggregate> unknown = {g};
  EXPECT_FALSE(judge_too_large(rule, job(1), unknown, kStart + 90 * kMinute));
}

}  // namespace
}  // namespace gpuscope::guard
