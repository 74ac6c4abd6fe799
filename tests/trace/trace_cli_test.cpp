// `gpuscope profile --trace-kernels` through the real binary on simulated GPUs: the environment
// the job gets, the import of the sidecar files its processes wrote (the real injection library
// loaded as CUDA loads it, plus processes playing traced CUDA workers, forked as torchrun
// does), `gpuscope kernels run.db`, and the errors: no library, a trace left by a stopped run.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "store/schema.hpp"
#include "support/process.hpp"
#include "support/sql.hpp"
#include "trace/sidecar_fixture.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

TEST(TraceCli, MissingLibraryIsAClearError) {
  TempDir dir;
  const ProcessResult r =
      run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-o", dir.file("run.db"),
                    "--trace-kernels", "--", "true"},
                   {{"GPUSCOPE_CUPTI_LIBRARY", dir.file("libgpuscope_cupti.so")}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--trace-kernels needs " + dir.file("libgpuscope_cupti.so")),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("GPUSCOPE_CUPTI_LIBRARY"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.file("run.db"))) << "nothing is written before the check";
}

TEST(TraceCli, TraceOfAStoppedRunIsImportedOnRequest) {
  TempDir dir;
  const std::string db = dir.file("run.db");
  ProcessResult r =
      run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-o", db, "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  write_sidecar(db + ".trace", uuid_of(1));

  // Noticed, not imported, without --import.
  r = run_gpuscope({"kernels", db});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("not imported"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("No kernels recorded"), std::string::npos) << r.out;
  // profile refuses to start over it without -f (here under another database name? no: the
  // database exists too, which -f also replaces).
  r = run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-o", db, "--trace-kernels",
                    "--", "true"});
  EXPECT_EQ(r.exit_code, 2);

  r = run_gpuscope({"kernels", "--import", db, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["summaries"][0]["kernels"].size(), 1u) << r.out;
  EXPECT_EQ(j["summaries"][0]["kernels"][0]["name"], "kernel()");
  EXPECT_EQ(j["summaries"][0]["kernels"][0]["instances"], 2);
  EXPECT_EQ(j["summaries"][0]["kernels"][0]["total_ns"], 500);
  EXPECT_EQ(number(db, "SELECT count(*) FROM kernels WHERE device_index = 1"), 2);
  EXPECT_FALSE(fs::exists(db + ".trace"));
  // Twice is an error: there is nothing left to import.
  r = run_gpuscope({"kernels", "--import", db});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nothing to import"), std::string::npos) << r.err;
}

TEST(TraceCli, LeftoverTraceStopsANewProfileWithoutForce) {
  TempDir dir;
  const std::string db = dir.file("run.db");
  write_sidecar(db + ".trace", uuid_of(0));
  ProcessResult r = run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-o", db,
                                  "--trace-kernels", "--", "true"});
#ifdef GPUSCOPE_TEST_FAKE_CUDA_JOB
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds the kernel trace of an earlier run"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpuscope kernels --import"), std::string::npos) << r.err;
  // -f discards it.
  r = run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-f", "-o", db,
                    "--trace-kernels", "--", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db, "SELECT count(*) FROM kernels"), 0);
#else
  // Built without CUPTI: the missing library is said first.
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--trace-kernels is not available"), std::string::npos) << r.err;
#endif
}

#ifdef GPUSCOPE_TEST_FAKE_CUDA_JOB

// --trace-nvtx: NVTX ranges only, as phases (docs/phases.md). Two processes (a forked worker and
// the main one) each play 3 steps of push/pop ranges on GPU 2; the library records markers only.
TEST(TraceCli, TraceNvtxRecordsRangesAsPhases) {
  TempDir dir;
  const std::string db = dir.file("run.db");
  const std::string gpu2 = uuid_of(2);
  const ProcessResult r =
      run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-o", db, "--trace-nvtx",
                    "--", GPUSCOPE_TEST_FAKE_CUDA_JOB, "--uuid", gpu2, "--fork", "1", "--nvtx", "3",
                    "--spacing-us", "100000"},
                   {{"CUDA_VISIBLE_DEVICES", "2"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(std::string("NVTX_INJECTION64_PATH=") + GPUSCOPE_TEST_CUPTI_LIBRARY),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GPUSCOPE_TRACE_KINDS=nvtx\n"), std::string::npos) << r.out;
  // NVTX found the library's entry point, which handed NVTX on to CUPTI's.
  EXPECT_NE(r.out.find("InitializeInjectionNvtx2=1\n"), std::string::npos) << r.out;
  EXPECT_EQ(number(db, "SELECT count(*) FROM kernels"), 0);  // ranges only
  // Per process: 3 steps, 3 forwards, 3 backwards, 3 instants, 1 tail never popped.
  EXPECT_EQ(number(db, "SELECT count(*) FROM phases WHERE source = 'nvtx'"), 26);
  EXPECT_EQ(number(db, "SELECT count(*) FROM phases WHERE name = 'saved' AND kind = 'point'"), 6);
  EXPECT_EQ(number(db, "SELECT count(*) FROM phases WHERE name = 'forward' AND category = 2"), 6);
  EXPECT_EQ(number(db,
                   "SELECT count(*) FROM phases WHERE name = 'tail' AND closed = 0 AND "
                   "domain = 'myapp'"),
            2);
  // Each process's ranges belong to its one GPU: NVML's GPU 2.
  EXPECT_EQ(number(db, "SELECT count(DISTINCT device_index) FROM phases"), 1);
  EXPECT_EQ(number(db, "SELECT min(device_index) FROM phases"), 2);
  EXPECT_EQ(number(db, "SELECT count(DISTINCT pid) FROM phases"), 2);
  // On the samples' clock, inside the run; a forward lasts 40 ms.
  EXPECT_EQ(number(db,
                   "SELECT count(*) FROM phases p JOIN runs r USING (run_id) WHERE "
                   "p.start_mono_ns < r.start_mono_ns OR p.end_mono_ns > r.end_mono_ns"),
            0);
  EXPECT_NEAR(number(db,
                     "SELECT avg(end_mono_ns - start_mono_ns) / 1e6 FROM phases WHERE name = "
                     "'forward'"),
              40, 0.01);
  const std::string problems = scalar(db, "SELECT problems FROM runs").value_or("");
  EXPECT_NE(problems.find("1 NVTX ranges were still open when the process ended"),
            std::string::npos)
      << problems;
  // analyze: the steps hold the forwards and backwards (exclusive time 5 % of a step).
  const ProcessResult a = run_gpuscope({"analyze", db, "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const json j = json::parse(a.out);
  bool found = false;
  for (const auto& n : j["phases"]["names"]) {
    if (n["name"] != "step") continue;
    found = true;
    EXPECT_EQ(n["count"], 6);
    EXPECT_EQ(n["source"], "nvtx");
    EXPECT_NEAR(n["total"]["exclusive_time_s"].get<double>() / n["total"]["time_s"].get<double>(),
                0.05 / 0.95, 0.01);
  }
  EXPECT_TRUE(found) << a.out;
}

TEST(TraceCli, ProfileTracesEveryCudaProcessOfTheJob) {
  TempDir dir;
  const std::string db = dir.file("run.db");
  const std::string gpu2 = uuid_of(2);
  // The job may see GPU 2 only: its CUDA device 0 is NVML's GPU 2, which is all gpuscope samples.
  const ProcessResult r = run_gpuscope(
      {"profile", "--simulate", "h100x4-straggler", "-q", "-o", db, "--trace-kernels", "--",
       GPUSCOPE_TEST_FAKE_CUDA_JOB, "--uuid", gpu2, "--fork", "2", "--kernels", "3"},
      {{"CUDA_VISIBLE_DEVICES", "2"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(std::string("CUDA_INJECTION64_PATH=") + GPUSCOPE_TEST_CUPTI_LIBRARY),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GPUSCOPE_TRACE_DIR=" + fs::absolute(db).string() + ".trace"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(db + ".trace")) << "imported files are removed";

  // Processes: the real library's (CUPTI refused without a driver, which it recorded), the job
  // itself and its two forked workers playing traced processes.
  EXPECT_EQ(number(db, "SELECT count(*) FROM trace_processes"), 4);
  EXPECT_EQ(number(db, "SELECT count(DISTINCT pid) FROM trace_processes"), 3);
  const auto library_problems = scalar(
      db, "SELECT problems FROM trace_processes WHERE kernels = 0 AND command LIKE '%fake_cuda%'");
  ASSERT_TRUE(library_problems.has_value());
  EXPECT_NE(library_problems->find("could not enable kernel records"), std::string::npos)
      << *library_problems;
  // Every kernel is on GPU 2, the only sampled GPU, found by UUID.
  EXPECT_EQ(number(db, "SELECT count(*) FROM kernels"), 9);
  EXPECT_EQ(number(db, "SELECT count(*) FROM kernels WHERE device_index = 2"), 9);
  EXPECT_EQ(number(db, "SELECT count(*) FROM cuda_devices WHERE device_index = 2 AND uuid = '" +
                           gpu2 + "'"),
            3);
  EXPECT_EQ(number(db, "SELECT count(*) FROM memory_ops WHERE operation = 'memcpy'"), 3);
  EXPECT_EQ(number(db, "SELECT count(*) FROM kernel_names"), 2);
  // On the samples' clock: inside the run.
  EXPECT_EQ(number(db,
                   "SELECT count(*) FROM kernels k JOIN runs r USING (run_id) WHERE "
                   "k.start_mono_ns >= r.start_mono_ns AND k.end_mono_ns <= r.end_mono_ns"),
            9);
  EXPECT_EQ(scalar(db, "SELECT value FROM meta WHERE key = 'schema_minor_version'"),
            std::to_string(store::kSchemaMinorVersion));

  // The same summary as an nsys export's: 3 processes × (gemm 400 µs ×2, relu 100 µs ×1).
  const ProcessResult k = run_gpuscope({"kernels", db, "--json"});
  ASSERT_EQ(k.exit_code, 0) << k.err;
  const json j = json::parse(k.out);
  const json& rows = j["summaries"][0]["kernels"];
  ASSERT_EQ(rows.size(), 2u) << k.out;
  EXPECT_EQ(rows[0]["name"], "void gemm<float>(int, float const*)");
  EXPECT_EQ(rows[0]["instances"], 6);
  EXPECT_EQ(rows[0]["total_ns"], 2'400'000);
  EXPECT_EQ(rows[1]["name"], "relu_kernel(float*)");
  EXPECT_EQ(rows[1]["total_ns"], 300'000);
  EXPECT_NEAR(rows[0]["time_percent"].get<double>(), 100.0 * 2.4 / 2.7, 0.05);
  const ProcessResult text = run_gpuscope({"kernels", db, "--name", "short"});
  EXPECT_NE(text.out.find("  gemm\n"), std::string::npos) << text.out;
}

TEST(TraceCli, ACommandThatCannotStartLeavesNoTraceBehind) {
  TempDir dir;
  const std::string db = dir.file("run.db");
  const ProcessResult r = run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-o", db,
                                        "--trace-kernels", "--", dir.file("no-such-command")});
  EXPECT_EQ(r.exit_code, 127) << r.err;
  EXPECT_FALSE(fs::exists(db + ".trace"));
  EXPECT_EQ(r.err.find("no CUDA process"), std::string::npos) << r.err;
}

#endif

}  // namespace
}  // namespace gpuscope::testing
