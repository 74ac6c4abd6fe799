// guard's drains without servers: sinfo and scontrol are scripts (sinfo prints a file of node
// lines the test changes as Slurm would; scontrol logs its arguments), the monitoring server
// answers the health queries by hand (health_source.hpp). A node whose GPU reported Xid 79 is
// drained once, its reason in Slurm's words, the admins told; a second broken node waits when
// the partition's share is used up, and is tried again; a dry run drains nothing; a failing
// sinfo drains nothing and says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "app/guard/digest.hpp"
#include "app/guard/guard_cycle.hpp"
#include "guard_test_support.hpp"
#include "health_source.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::app {
namespace {

using app::testing::script;
using gpuscope::testing::read_file;
using gpuscope::testing::TempDir;
using guard::testing::HealthSource;

constexpr std::int64_t kNow = 1795924200000;
constexpr std::int64_t kMinute = 60'000;

struct Fixture {
  TempDir dir;
  HealthSource source;
  guard::Rules rules;
  GuardRun run;
  std::optional<store::GuardState> state;

  Fixture() {
    std::ofstream(dir.file("squeue.json")) << "{\"jobs\": []}";
    script(dir.file("squeue"), "cat " + dir.file("squeue.json") + "\n");
    script(dir.file("sinfo"), "echo \"sinfo $*\" >>" + dir.file("actions.log") + "\ncat " +
                                  dir.file("nodes.txt") + "\n");
    script(dir.file("scontrol"), "echo \"scontrol $*\" >>" + dir.file("actions.log") + "\n");
    run.squeue = dir.file("squeue");
    run.sinfo = dir.file("sinfo");
    run.scontrol = dir.file("scontrol");
    rules.enforce = true;
    rules.cluster = "alps";
    rules.sample_interval_s = 30;
    rules.health.max_drained_share = 0.1;  // 10 nodes: one at a time
    set_nodes({});
    source.recent_range_ms = 90'999;
    state.emplace(store::GuardState::open(dir.file("guard.db")));
  }

  // Ten nodes of partition gpu, those in `drained` out of service.
  void set_nodes(const std::set<int>& drained) {
    std::ofstream out(dir.file("nodes.txt"));
    for (int n = 1; n <= 10; ++n)
      out << "n" << n << "|gpu|" << (drained.count(n) > 0 ? "drained" : "mixed") << "\n";
  }

  void broken(const std::string& node, const std::string& uuid, double xid) {
    const tsdb::Labels labels = {{"uuid", uuid}, {"gpu", "0"}, {"hostname", node}};
    source.add("last:gpuscope_gpu_xid_last", labels, xid);
    source.add("increase:gpuscope_gpu_xid_errors_total", labels, 1);
  }

  CycleTally cycle(std::int64_t now_ms, bool enforce = true) {
    return app::testing::one_cycle(run, rules, *state, source, now_ms, enforce);
  }
  std::string actions() { return read_file(dir.file("actions.log")); }
};

TEST(GuardDrains, ABrokenGpusNodeIsDrainedOnceWithItsReason) {
  Fixture f;
  f.broken("n3", "GPU-3", 79);
  ::testing::internal::CaptureStdout();
  CycleTally t = f.cycle(kNow);
  EXPECT_EQ(t.broken_nodes, 1u);
  EXPECT_EQ(t.drained, 1u);
  EXPECT_NE(f.actions().find("sinfo --Node --noheader --format=%N|%R|%T\n"), std::string::npos);
  EXPECT_NE(f.actions().find("scontrol update NodeName=n3 State=DRAIN Reason=gpuscope: Xid 79"),
            std::string::npos)
      << f.actions();
  EXPECT_NE(f.actions().find("on GPU-3"), std::string::npos);
  EXPECT_TRUE(f.state->drained_ms("n3"));
  // Slurm now shows it drained: the next cycle leaves it alone, whatever the series say.
  f.set_nodes({3});
  t = f.cycle(kNow + 5 * kMinute);
  EXPECT_EQ(t.drained, 0u);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("\"notice\":\"drain\""), std::string::npos) << out;
  EXPECT_NE(out.find("Node n3 drained: gpuscope: Xid 79"), std::string::npos) << out;
  std::size_t drains = 0;
  for (const auto& a : f.state->audit_since(0)) drains += a.action == "drain" ? 1u : 0u;
  EXPECT_EQ(drains, 1u);
  // The second cycle's window begins where the first ended, a sample interval's two before.
  const std::string range = "[" + std::to_string(5 * kMinute + 60'000 + 999) + "ms]";
  EXPECT_NE(f.source.asked.back().find("@ 1795924500.999"), std::string::npos);
  EXPECT_TRUE(std::any_of(f.source.asked.begin(), f.source.asked.end(), [&](const std::string& e) {
    return e.find(range) != std::string::npos;
  }));
}

TEST(GuardDrains, APartitionsShareHoldsTheSecondNodeBackUntilThereIsRoom) {
  Fixture f;
  f.broken("n3", "GPU-3", 79);
  f.broken("n7", "GPU-7", 48);
  ::testing::internal::CaptureStdout();
  CycleTally t = f.cycle(kNow);
  EXPECT_EQ(t.drained, 1u);
  EXPECT_EQ(t.drains_held, 1u);
  EXPECT_EQ(f.actions().find("NodeName=n7"), std::string::npos);
  EXPECT_FALSE(f.state->time_mark("health_until_ms"));  // the window waits for n7
  // The held node is told to the admins once a day, however many cycles hold it.
  f.set_nodes({3});
  t = f.cycle(kNow + 5 * kMinute);
  EXPECT_EQ(t.drains_held, 1u);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("\"notice\":\"drain_held\""), std::string::npos) << out;
  EXPECT_NE(out.find("partition gpu has 1 of 10 nodes out of service"), std::string::npos) << out;
  // n3 repaired and back: n7 is drained.
  f.set_nodes({});
  f.source.answers.clear();
  f.broken("n7", "GPU-7", 48);
  t = f.cycle(kNow + 10 * kMinute);
  EXPECT_EQ(t.drained, 1u);
  EXPECT_NE(f.actions().find("NodeName=n7 State=DRAIN Reason=gpuscope: Xid 48"), std::string::npos);
  EXPECT_TRUE(f.state->time_mark("health_until_ms"));
}

TEST(GuardDrains, TheCircuitBreakerDrainsNoneWhenTooManyWouldGo) {
  Fixture f;
  f.rules.health.max_drained_share = 0.5;
  f.rules.max_drains_per_cycle = 2;
  f.broken("n2", "GPU-2", 79);
  f.broken("n3", "GPU-3", 79);
  f.broken("n4", "GPU-4", 79);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const CycleTally t = f.cycle(kNow);
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(t.drained, 0u);
  EXPECT_EQ(t.drains_held, 3u);
  EXPECT_EQ(f.actions().find("scontrol"), std::string::npos) << f.actions();
  EXPECT_NE(err.find("the circuit breaker: 3 nodes would be drained this cycle, the rules allow 2"),
            std::string::npos)
      << err;
  EXPECT_NE(out.find("\"notice\":\"drain_held\""), std::string::npos);
  // Two would go: they do.
  f.source.answers.clear();
  f.broken("n2", "GPU-2", 79);
  f.broken("n3", "GPU-3", 79);
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(f.cycle(kNow + 5 * kMinute).drained, 2u);
  ::testing::internal::GetCapturedStdout();
}

TEST(GuardDrains, ADryRunDrainsNothing) {
  Fixture f;
  f.broken("n3", "GPU-3", 79);
  ::testing::internal::CaptureStdout();
  const CycleTally t = f.cycle(kNow, false);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(t.drained, 1u);  // would have
  EXPECT_EQ(f.actions().find("scontrol"), std::string::npos) << f.actions();
  EXPECT_FALSE(f.state->drained_ms("n3"));
  EXPECT_NE(out.find("\"delivery\":\"dry-run\""), std::string::npos) << out;
  EXPECT_EQ(f.state->audit_since(0).back().outcome, "dry-run");
}

TEST(GuardDrains, AFailingSinfoDrainsNothingAndSaysSo) {
  Fixture f;
  f.broken("n3", "GPU-3", 79);
  script(f.dir.file("sinfo"),
         "echo 'slurm_load_partitions: Unable to contact slurm controller' >&2\nexit 1\n");
  ::testing::internal::CaptureStderr();
  const CycleTally t = f.cycle(kNow);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(t.failed, 1u);
  EXPECT_EQ(t.drained, 0u);
  EXPECT_NE(err.find("sinfo exited 1"), std::string::npos) << err;
  EXPECT_NE(err.find("Unable to contact slurm controller"), std::string::npos) << err;
  EXPECT_FALSE(f.state->time_mark("health_until_ms"));
}

TEST(GuardDrains, AFailedScontrolIsTriedAgainNextCycle) {
  Fixture f;
  f.broken("n3", "GPU-3", 79);
  script(f.dir.file("scontrol"), "echo 'Invalid node state specified' >&2\nexit 1\n");
  ::testing::internal::CaptureStdout();
  CycleTally t = f.cycle(kNow);
  EXPECT_EQ(t.failed, 1u);
  EXPECT_FALSE(f.state->drained_ms("n3"));
  EXPECT_NE(f.state->audit_since(0).back().outcome.find("Invalid node state specified"),
            std::string::npos);
  script(f.dir.file("scontrol"), "echo \"scontrol $*\" >>" + f.dir.file("actions.log") + "\n");
  t = f.cycle(kNow + 5 * kMinute);
  ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(t.drained, 1u);
  EXPECT_TRUE(f.state->drained_ms("n3"));
}

TEST(GuardDigest, TheAdminsDigestComesOnceADayWithWhatWasDone) {
  Fixture f;
  f.rules.notify.admins = {"hpc@example.org"};
  f.rules.notify.digest_hour = 0;  // due at any hour
  f.broken("n3", "GPU-3", 79);
  ::testing::internal::CaptureStdout();
  f.cycle(kNow);
  f.set_nodes({3});
  f.cycle(kNow + 5 * kMinute);
  const std::string out = ::testing::internal::GetCapturedStdout();
  std::size_t digests = 0;
  for (std::size_t at = out.find("\"notice\":\"digest\""); at != std::string::npos;
       at = out.find("\"notice\":\"digest\"", at + 1)) {
    ++digests;
  }
  EXPECT_EQ(digests, 1u) << out;
  const auto audit = f.state->audit_since(0);
  const guard::Notice n = digest_notice("alps", audit, kNow);
  EXPECT_EQ(n.subject, "[alps] gpuscope guard's day: 1 action");
  EXPECT_NE(n.body.find("  drain: 1 done\n"), std::string::npos) << n.body;
  EXPECT_NE(n.body.find("drain n3: done"), std::string::npos) << n.body;
  EXPECT_NE(digest_notice("alps", {}, kNow).body.find("Nothing:"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::app
