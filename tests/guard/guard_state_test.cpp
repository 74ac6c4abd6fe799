// guard's state database: a notice claimed once is never claimed again, across a restart (the
// file closed and opened again); a failed send gives its claim back; jobs remembered and
// forgotten; the audit kept in order; the file private (0600) and a foreign SQLite refused.
#include "store/guard_state.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/error.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::TempDir;

TEST(GuardState, ANoticeIsClaimedOnceEvenAfterARestart) {
  TempDir dir;
  const std::string path = dir.file("guard.db");
  {
    GuardState state = GuardState::open(path);
    state.begin();
    EXPECT_TRUE(state.claim_notice("job:7:first_warning:mail:alice", "alice", 1000));
    EXPECT_FALSE(state.claim_notice("job:7:first_warning:mail:alice", "alice", 2000));
    EXPECT_TRUE(state.claim_notice("job:8:first_warning:mail:alice", "alice", 3000));
    state.commit();
  }
  GuardState again = GuardState::open(path);
  again.begin();
  EXPECT_FALSE(again.claim_notice("job:7:first_warning:mail:alice", "alice", 4000));
  EXPECT_EQ(again.notices_to("alice", 0), 2u);
  EXPECT_EQ(again.notices_to("alice", 2500), 1u);
  again.release_notice("job:8:first_warning:mail:alice");
  EXPECT_TRUE(again.claim_notice("job:8:first_warning:mail:alice", "alice", 5000));
  again.commit();
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(GuardState, JobsAreRememberedAndForgotten) {
  TempDir dir;
  GuardState state = GuardState::open(dir.file("guard.db"));
  GuardJobMemory memory;
  memory.checked_until_ms = 500;
  memory.idle_since_ms = 100;
  memory.first_warning_ms = 400;
  memory.advised_too_large = true;
  state.save_job("7", memory, 500);
  state.save_job("8", {}, 900);
  auto jobs = state.jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs["7"].idle_since_ms, 100);
  EXPECT_EQ(jobs["7"].first_warning_ms, 400);
  EXPECT_FALSE(jobs["7"].second_warning_ms);
  EXPECT_TRUE(jobs["7"].advised_too_large);
  EXPECT_EQ(state.forget_jobs(600), 1u);
  EXPECT_EQ(state.jobs().count("7"), 0u);
}

TEST(GuardState, TheAuditKeepsEveryActionInOrder) {
  TempDir dir;
  GuardState state = GuardState::open(dir.file("guard.db"));
  state.audit({1000, "first_warning", "7", "alice", false, "dry-run", R"({"idle_s":3600})"});
  state.audit({2000, "drain", "n3", "", true, "done", R"({"xid":79})"});
  const auto all = state.audit_since(0);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].action, "first_warning");
  EXPECT_FALSE(all[0].enforced);
  EXPECT_EQ(all[1].figures, R"({"xid":79})");
  EXPECT_EQ(state.audit_since(1500).size(), 1u);
  state.record_drain("n3", "gpuscope: Xid 79", 2000);
  EXPECT_EQ(state.drained_ms("n3"), 2000);
  EXPECT_FALSE(state.drained_ms("n4"));
  EXPECT_TRUE(state.claim_digest("2026-11-29", 3000));
  EXPECT_FALSE(state.claim_digest("2026-11-29", 4000));
}

TEST(GuardState, AnotherProgramsDatabaseIsRefused) {
  TempDir dir;
  const std::string path = dir.file("other.db");
  ASSERT_EQ(std::system(("sqlite3 " + path + " 'CREATE TABLE t(x)'").c_str()), 0);
  try {
    GuardState::open(path);
    FAIL() << "a foreign database was opened as guard's state";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not gpuscope guard's state"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpuscope::store
