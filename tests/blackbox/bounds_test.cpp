// Resource bounds (issue 12): memory follows what a file holds, never a number it claims.
// Memory is bounded by running the binary under an address-space limit (prlimit), so the verdict
// does not depend on the machine's speed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

// Runs gpuscope with at most 1.5 GB of address space.
ProcessResult run_bounded(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"prlimit", "--as=1500000000", GPUSCOPE_TEST_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

TEST(Bounds, SparseDeviceIndicesCostNothing) {
#ifdef GPUSCOPE_SANITIZED
  GTEST_SKIP() << "a sanitizer's shadow memory does not fit an address-space limit";
#endif
  if (access("/usr/bin/prlimit", X_OK) != 0) GTEST_SKIP() << "prlimit (util-linux) is missing";
  TempDir dir;
  const std::string db = dir.file("run.db");
  ProcessResult r = run_gpuscope(
      {"profile", "--simulate", "h100", "-q", "-s", "50", "-o", db, "--", "sleep", "0.3"},
      {{"GPUSCOPE_SIM_STATE", dir.file("state.json")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A device index of two billion (merge sized a vector by it: 2.6 GB at 3e6, bad_alloc at 2e9).
  r = run_process({"sqlite3", db,
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

}  // namespace
}  // namespace gpuscope::testing
