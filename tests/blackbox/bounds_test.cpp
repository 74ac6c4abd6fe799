// Resource bounds: memory follows what a file holds, never a number it claims.
// Memory is bounded by running the binary under an address-space limit (prlimit), so the verdict
// does not depend on the machine's speed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

// Whether memory can be bounded here: prlimit exists and no sanitizer reserves shadow memory.
bool can_bound() {
#ifdef GPUSCOPE_SANITIZED
  return false;
#else
  return access("/usr/bin/prlimit", X_OK) == 0;
#endif
}

// A short profiled run of a simulated H100 into db.
void profile_into(const TempDir& dir, const std::string& db, const std::string& seconds) {
  const ProcessResult r = run_gpuscope(
      {"profile", "--simulate", "h100", "-q", "-s", "50", "-o", db, "--", "sleep", seconds},
      {{"GPUSCOPE_SIM_STATE", dir.file("state.json")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// Runs gpuscope with at most 1.5 GB of address space.
ProcessResult run_bounded(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"prlimit", "--as=1500000000", GPUSCOPE_TEST_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

TEST(Bounds, SparseDeviceIndicesCostNothing) {
  if (!can_bound()) GTEST_SKIP() << "needs prlimit and no sanitizer (shadow memory)";
  TempDir dir;
  const std::string db = dir.file("run.db");
  ASSERT_NO_FATAL_FAILURE(profile_into(dir, db, "0.3"));
  // A device index of two billion (merge sized a vector by it: 2.6 GB at 3e6, bad_alloc at 2e9).
  const ProcessResult r =
      run_process({"sqlite3", db,
                   "UPDATE samples SET device_index = 2000000000; UPDATE devices SET "
                   "device_index = 2000000000; UPDATE power_samples SET device_index = "
                   "2000000000; DELETE FROM sample_chunks;"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& command : std::vector<std::vector<std::string>>{
           {"merge", dir.file("merged.db"), db},
           {"analyze", db},
           {"analyze", dir.file("merged.db")},
           {"report", db, "-o", dir.file("report.html")},
           {"export", "--perfetto", dir.file("trace.json"), db}}) {
    const ProcessResult bounded = run_bounded(command);
    EXPECT_EQ(bounded.exit_code, 0) << command.front() << ": " << bounded.err;
  }
}

// A wall-clock step (one sample's wall_ns a year ahead: NTP, a VM migration) made analyze
// allocate in proportion to the span (2.4 GB, then bad_alloc); a monotonic time ten years out
// (a damaged file) likewise. Times follow the monotonic clock within a run; the step is a
// diagnosis line, a sample outside the run is left out with a note.
TEST(Bounds, ClockStepsAndOutlyingTimesAreReportedNotAllocated) {
  if (!can_bound()) GTEST_SKIP() << "needs prlimit and no sanitizer (shadow memory)";
  TempDir dir;
  const std::string db = dir.file("run.db");
  ASSERT_NO_FATAL_FAILURE(profile_into(dir, db, "0.4"));
  const std::string stepped = dir.file("stepped.db");
  const std::string damaged = dir.file("damaged.db");
  ASSERT_EQ(run_process({"cp", db, stepped}).exit_code, 0);
  ASSERT_EQ(run_process({"cp", db, damaged}).exit_code, 0);
  const std::string last = "rowid = (SELECT max(rowid) FROM samples)";
  ASSERT_EQ(run_process({"sqlite3", stepped,
                         "UPDATE samples SET wall_ns = wall_ns + 31536000000000000 WHERE " + last +
                             "; DELETE FROM sample_chunks;"})
                .exit_code,
            0);
  ASSERT_EQ(run_process({"sqlite3", damaged,
                         "UPDATE samples SET mono_ns = mono_ns + 315360000000000000, wall_ns = "
                         "wall_ns + 315360000000000000 WHERE " +
                             last + "; DELETE FROM sample_chunks;"})
                .exit_code,
            0);
  const ProcessResult step = run_bounded({"analyze", stepped});
  ASSERT_EQ(step.exit_code, 0) << step.err;
  EXPECT_NE(step.out.find("stepped by +365.0 days"), std::string::npos) << step.out;
  // The run still lasts a fraction of a second, not a year ("… · 0.5 s").
  const std::string header = step.out.substr(0, step.out.find('\n'));
  EXPECT_NE(header.find(" · 0."), std::string::npos) << header;
  const ProcessResult outside = run_bounded({"analyze", damaged, "--json"});
  ASSERT_EQ(outside.exit_code, 0) << outside.err;
  EXPECT_NE(outside.out.find("outside the run were left out"), std::string::npos)
      << outside.out.substr(0, 400);
  for (const std::string& file : {stepped, damaged}) {
    const ProcessResult report = run_bounded({"report", file, "-o", file + ".html"});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    const ProcessResult fine = run_bounded({"analyze", file, "--resolution", "0.001"});
    EXPECT_EQ(fine.exit_code, 0) << fine.err;
  }
}

// std::regex recurses once per character: --work-regex '([0-9]+)' over a 65 000-digit output
// line overflowed the stack (SIGSEGV). Patterns see the first 4096 bytes of a line.
TEST(Bounds, AVeryLongOutputLineDoesNotOverflowTheStack) {
  TempDir dir;
  const std::string db = dir.file("run.db");
  const ProcessResult r = run_gpuscope(
      {"profile", "--simulate", "h100", "-q", "--capture-output", "-o", db, "--", "sh", "-c",
       "head -c 65000 /dev/zero | tr '\\0' 7; echo; echo 'step done: 12 tokens'"},
      {{"GPUSCOPE_SIM_STATE", dir.file("state.json")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ProcessResult analyzed =
      run_gpuscope({"analyze", db, "--work-regex", "([0-9]+)", "--json"});
  EXPECT_EQ(analyzed.exit_code, 0) << analyzed.err;
  EXPECT_NE(analyzed.out.find("\"work\""), std::string::npos) << analyzed.out.substr(0, 300);
}

}  // namespace
}  // namespace gpuscope::testing
