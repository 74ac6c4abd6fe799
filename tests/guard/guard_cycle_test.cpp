// guard's cycles end to end without servers: squeue, scancel and scontrol are scripts that
// print a recorded answer and log their arguments, and the monitoring server is the fleet
// tests' fake that evaluates the queries it is sent. An idle job is warned at the first cycle
// that sees it, warned again, then cancelled after the notice with its reason in AdminComment;
// the busy job and the exempt user's idle job are left alone; a restart that lost the memory of
// a warning does not send it again; a dry run changes nothing; the circuit breaker holds a
// cancel back.
#include "app/guard/guard_cycle.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "fleet/aggregate_test_data.hpp"
#include "fleet/fake_promql_source.hpp"
#include "guard_test_support.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::app {
namespace {

using app::testing::script;
using fleet::testing::FakePromqlSource;
using gpuscope::testing::read_file;
using gpuscope::testing::TempDir;

constexpr std::int64_t kMinute = 60'000;
constexpr std::int64_t kNow = fleet::testing::kS + 180 * kMinute;  // 3 h after the jobs began

std::string job_json(int id, const std::string& user, int gpus) {
  return "{\"job_id\": " + std::to_string(id) + ", \"user_name\": \"" + user +
         "\", \"account\": \"physics\", \"partition\": \"gpu\", \"qos\": \"normal\", \"name\": "
         "\"train\", \"job_state\": \"RUNNING\", \"nodes\": \"n1\", \"batch_flag\": true, "
         "\"tres_alloc_str\": \"cpu=8,node=1,gres/gpu=" +
         std::to_string(gpus) + "\", \"start_time\": " + std::to_string(fleet::testing::kS / 1000) +
         "}";
}

struct Fixture {
  TempDir dir;
  FakePromqlSource source;
  guard::Rules rules;
  GuardRun run;
  std::optional<store::GuardState> state;

  Fixture() {
    const std::string squeue_json = "{\"jobs\": [" + job_json(101, "alice", 2) + ", " +
                                    job_json(102, "bob", 1) + ", " + job_json(103, "carol", 1) +
                                    "]}";
    std::ofstream(dir.file("squeue.json")) << squeue_json;
    script(dir.file("squeue"), "cat " + dir.file("squeue.json") + "\n");
    script(dir.file("scancel"), "echo \"scancel $*\" >>" + dir.file("actions.log") + "\n");
    script(dir.file("scontrol"), "echo \"scontrol $*\" >>" + dir.file("actions.log") + "\n");
    run.squeue = dir.file("squeue");
    run.scancel = dir.file("scancel");
    run.scontrol = dir.file("scontrol");
    rules.enforce = true;
    rules.sample_interval_s = 10;
    rules.idle.exempt.users = {"carol"};
    rules.too_large.enabled = false;
    rules.health.enabled = false;  // the drains: guard_drains_test.cpp
    // Every GPU sampled every 10 s for 4 hours: alice's and carol's idle, bob's busy.
    const auto gpu = [&](const std::string& uuid, const std::string& job, double util) {
      source.add(fleet::testing::series("gpuscope_gpu_util_ratio",
                                        {{"uuid", uuid}, {"gpu", "0"}, {"hostname", "n1"}}, job),
                 fleet::testing::every10s(0, 4 * 3600, util));
    };
    gpu("GPU-A", "101", 0.0);
    gpu("GPU-B", "101", 0.0);
    gpu("GPU-C", "102", 0.7);
    gpu("GPU-D", "103", 0.0);
    state.emplace(store::GuardState::open(dir.file("guard.db")));
  }

  CycleTally cycle(std::int64_t now_ms, bool enforce = true) {
    return app::testing::one_cycle(run, rules, *state, source, now_ms, enforce);
  }
  std::string actions() { return read_file(dir.file("actions.log")); }
};

TEST(GuardCycle, AnIdleJobIsWarnedTwiceThenCancelledWithItsReason) {
  Fixture f;
  ::testing::internal::CaptureStdout();
  CycleTally t = f.cycle(kNow);
  EXPECT_EQ(t.jobs, 3u);
  EXPECT_EQ(t.judged, 2u);  // carol is exempt
  EXPECT_EQ(t.idle, 1u);
  EXPECT_EQ(t.warned, 1u);
  EXPECT_EQ(f.cycle(kNow + 5 * kMinute).warned, 1u);      // the second warning
  EXPECT_EQ(f.cycle(kNow + 10 * kMinute).cancelled, 0u);  // the notice runs
  t = f.cycle(kNow + 20 * kMinute);
  EXPECT_EQ(t.cancelled, 1u);
  EXPECT_EQ(f.cycle(kNow + 25 * kMinute).cancelled, 0u);  // once
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("\"notice\":\"first_warning\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"notice\":\"second_warning\""), std::string::npos);
  EXPECT_NE(out.find("\"notice\":\"cancel\""), std::string::npos);
  EXPECT_EQ(out.find("\"target\":\"102\""), std::string::npos);  // the busy job
  EXPECT_EQ(out.find("\"target\":\"103\""), std::string::npos);  // the exempt user's
  const std::string log = f.actions();
  EXPECT_NE(log.find("scontrol update JobId=101 AdminComment=gpuscope guard: 2 of 2 GPUs idle"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("scancel 101\n"), std::string::npos);
  EXPECT_EQ(log.find("102"), std::string::npos);
  EXPECT_EQ(log.find("103"), std::string::npos);
  const auto audit = f.state->audit_since(0);
  ASSERT_EQ(audit.size(), 3u);
  EXPECT_EQ(audit[2].action, "cancel");
  EXPECT_EQ(audit[2].outcome, "done");
}

TEST(GuardCycle, ARestartThatLostItsMemorySendsNoWarningTwice) {
  Fixture f;
  ::testing::internal::CaptureStdout();
  f.cycle(kNow);
  f.state->save_job("101", {}, kNow);  // as if guard died before saving the step
  f.cycle(kNow + 5 * kMinute);
  const std::string out = ::testing::internal::GetCapturedStdout();
  std::size_t sent = 0;
  for (std::size_t at = out.find("\"delivery\":\"sent\""); at != std::string::npos;
       at = out.find("\"delivery\":\"sent\"", at + 1)) {
    ++sent;
  }
  EXPECT_EQ(sent, 1u) << out;
  EXPECT_TRUE(f.state->jobs().at("101").first_warning_ms);
}

TEST(GuardCycle, ADryRunSaysWhatItWouldDoAndDoesNothing) {
  Fixture f;
  ::testing::internal::CaptureStdout();
  for (int minute = 0; minute <= 30; minute += 5) f.cycle(kNow + minute * kMinute, false);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("\"delivery\":\"dry-run\""), std::string::npos) << out;
  EXPECT_EQ(out.find("\"delivery\":\"sent\""), std::string::npos);
  // It says the whole course enforcing would take: both warnings, then the cancel.
  EXPECT_NE(out.find("\"notice\":\"second_warning\""), std::string::npos);
  EXPECT_NE(out.find("\"notice\":\"cancel\""), std::string::npos);
  EXPECT_EQ(f.actions(), "");
  EXPECT_EQ(f.state->audit_since(0).back().outcome, "dry-run");
  // Enforcing then starts afresh: the dry run's steps are forgotten.
  f.state->switch_mode("dry-run");  // as guard records it when it starts
  EXPECT_TRUE(f.state->switch_mode("enforce"));
  EXPECT_EQ(f.state->jobs().count("101"), 0u);
}

TEST(GuardCycle, TheCircuitBreakerHoldsCancelsBack) {
  Fixture f;
  f.rules.max_cancels_per_cycle = 0;
  ::testing::internal::CaptureStdout();
  f.cycle(kNow);
  f.cycle(kNow + 5 * kMinute);
  const CycleTally t = f.cycle(kNow + 20 * kMinute);
  ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(t.held, 1u);
  EXPECT_EQ(t.cancelled, 0u);
  EXPECT_EQ(f.actions(), "");
  EXPECT_FALSE(f.state->jobs().at("101").cancelled_ms);
}

}  // namespace
}  // namespace gpuscope::app
