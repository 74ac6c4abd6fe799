// `gpuscope kernels` through the real binary: text, JSON, CSV, --top, --name, --per-rank,
// notes and errors.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/nsys_fixture.hpp"
#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;

class KernelsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    write_nsys_export(current_, NsysSchema::Current);
    write_nsys_export(legacy_, NsysSchema::Legacy, 400);  // gemm gets a fourth launch: 400 ns
  }
  TempDir dir_;
  std::string current_ = dir_.file("rank0.sqlite");
  std::string legacy_ = dir_.file("rank1.sqlite");
};

TEST_F(KernelsCli, TextTableLikeNsys) {
  const ProcessResult r = run_gpuscope({"kernels", current_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cuda_gpu_kern_sum"), std::string::npos);
  EXPECT_NE(r.out.find("Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  "
                       "Max (ns)  StdDev (ns)  Name"),
            std::string::npos)
      << r.out;
  // gemm: 900 ns of 1750 = 51.4 %, 3 launches, avg 300, med 200, sd sqrt(70000) = 264.6.
  EXPECT_NE(r.out.find("51.4              900          3     300.0     200.0       100       600"
                       "        264.6  void gemm<float>(int, float const*)"),
            std::string::npos)
      << r.out;
  // gemm before relu before reduce (total time descending).
  EXPECT_LT(r.out.find("void gemm"), r.out.find("relu_kernel(float*)"));
  EXPECT_LT(r.out.find("relu_kernel(float*)"), r.out.find("reduce(float const*)"));
  // Memory: HtoD 4000 of 4700 ns = 85.1 %, 12000 bytes = 0.012 MB.
  EXPECT_NE(r.out.find("cuda_gpu_mem_sum"), std::string::npos);
  EXPECT_NE(r.out.find("0.012  [CUDA memcpy Host-to-Device]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1.000  [CUDA memset]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("85.1             4000"), std::string::npos) << r.out;
}

TEST_F(KernelsCli, JsonSumsRanks) {
  const ProcessResult r = run_gpuscope({"kernels", current_, legacy_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["names"], "demangled");
  EXPECT_EQ(j["per_rank"], false);
  ASSERT_EQ(j["summaries"].size(), 1u);
  const json& s = j["summaries"][0];
  EXPECT_EQ(s["files"].size(), 2u);
  // gemm: 100, 200, 600 (rank 0) + 100, 200, 600, 400 (rank 1) = 2200 ns, 7 launches,
  // median 200; relu 1600; reduce 100; all 3900.
  const json& gemm = s["kernels"][0];
  EXPECT_EQ(gemm["name"], "void gemm<float>(int, float const*)");
  EXPECT_EQ(gemm["instances"], 7);
  EXPECT_EQ(gemm["total_ns"], 2200);
  EXPECT_DOUBLE_EQ(gemm["med_ns"].get<double>(), 200.0);
  EXPECT_NEAR(gemm["time_percent"].get<double>(), 100.0 * 2200 / 3900, 1e-9);
  EXPECT_EQ(s["kernels"][1]["total_ns"], 1600);
  EXPECT_EQ(s["kernel_count"], 3);
  // HtoD: 2 + 1 copies, 4000 + 1000 ns, 12000 + 4000 bytes.
  const json& htod = s["memory"][0];
  EXPECT_EQ(htod["operation"], "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(htod["count"], 3);
  EXPECT_EQ(htod["total_ns"], 5000);
  EXPECT_EQ(htod["total_bytes"], 16000);
}

TEST_F(KernelsCli, PerRankJsonAndText) {
  const ProcessResult r = run_gpuscope({"kernels", current_, legacy_, "--per-rank", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["summaries"].size(), 2u);
  EXPECT_EQ(j["summaries"][0]["files"][0], current_);
  EXPECT_EQ(j["summaries"][0]["kernels"][0]["total_ns"], 900);
  EXPECT_EQ(j["summaries"][1]["files"][0], legacy_);
  EXPECT_EQ(j["summaries"][1]["kernels"][0]["total_ns"], 1300);
  EXPECT_EQ(j["summaries"][1]["kernels"][0]["instances"], 4);
  EXPECT_DOUBLE_EQ(j["summaries"][1]["kernels"][0]["med_ns"].get<double>(), 300.0);

  const ProcessResult t = run_gpuscope({"kernels", current_, legacy_, "--per-rank"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("== " + current_ + " (names: demangled) =="), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("== " + legacy_ + " (names: demangled) =="), std::string::npos);
}

TEST_F(KernelsCli, TopAndShortNames) {
  const ProcessResult r = run_gpuscope({"kernels", current_, "--top", "1", "--name", "short"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(top 1 of 3 kernels)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  gemm\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("relu_kernel"), std::string::npos) << r.out;

  const ProcessResult j = run_gpuscope({"kernels", current_, "--top", "2", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json parsed = json::parse(j.out);
  EXPECT_EQ(parsed["summaries"][0]["kernels"].size(), 2u);
  EXPECT_EQ(parsed["summaries"][0]["kernel_count"], 3);
  // Shares stay relative to all kernels: relu 800 of 1750.
  EXPECT_NEAR(parsed["summaries"][0]["kernels"][1]["time_percent"].get<double>(),
              100.0 * 800 / 1750, 1e-9);
}

TEST_F(KernelsCli, ShortNamesMissingInLegacySchemaIsANote) {
  const ProcessResult r = run_gpuscope({"kernels", legacy_, "--name", "short"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("no shortName column"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("void gemm<float>(int, float const*)"), std::string::npos);
}

TEST_F(KernelsCli, Csv) {
  const ProcessResult r = run_gpuscope({"kernels", current_, "--csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("file,kind,name,time_percent,total_ns,count,avg_ns,med_ns,min_ns,max_ns,"
                        "stddev_ns,total_bytes\n",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("all,kernel,\"void gemm<float>(int, float const*)\",51.4286,900,3,"
                       "300.0000,200.0000,100,600,264.5751,\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("all,memory,[CUDA memset],4.2553,200,1,200.0000,200.0000,200,200,0.0000,"
                       "1000000\n"),
            std::string::npos)
      << r.out;
  const ProcessResult p = run_gpuscope({"kernels", current_, legacy_, "--csv", "--per-rank"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find(legacy_ + ",kernel,\"void gemm<float>(int, float const*)\",60.4651,1300,4,"),
            std::string::npos)
      << p.out;
}

TEST_F(KernelsCli, NoKernelsIsANoteAndExitZero) {
  const std::string empty = dir_.file("empty.sqlite");
  write_sqlite(empty,
               "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
               "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);");
  const ProcessResult r = run_gpuscope({"kernels", empty});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("no kernels recorded"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("No kernels recorded."), std::string::npos) << r.out;
}

TEST_F(KernelsCli, ErrorsNameTheFileAndWhatToDo) {
  const std::string corrupt = dir_.file("corrupt.sqlite");
  std::ofstream(corrupt) << "definitely not SQLite\n";
  ProcessResult r = run_gpuscope({"kernels", current_, corrupt});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("corrupt.sqlite"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nsys export --type sqlite"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());

  const std::string rep = dir_.file("r.nsys-rep");
  std::ofstream(rep) << "binary report";
  r = run_gpuscope({"kernels", rep});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("run 'nsys export --type sqlite " + rep + "'"), std::string::npos) << r.err;

  const std::string other = dir_.file("other.db");
  write_sqlite(other, "CREATE TABLE t (x INTEGER);");
  r = run_gpuscope({"kernels", other});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not an Nsight Systems export"), std::string::npos) << r.err;

  r = run_gpuscope({"kernels", dir_.file("missing.sqlite")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.sqlite"), std::string::npos) << r.err;

  r = run_gpuscope({"kernels", current_, "--json", "--csv"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_gpuscope({"kernels", current_, "--name", "mangled"});
  EXPECT_EQ(r.exit_code, 2);
}

// A kernel name that is not UTF-8 (names are bytes from the program) made --json fail with an
// internal error; it is written with U+FFFD and parses strictly.
TEST_F(KernelsCli, JsonOfANameThatIsNotUtf8Parses) {
  write_sqlite(current_, "UPDATE StringIds SET value = CAST(X'72656475FF28' AS TEXT) WHERE id = 5");
  const ProcessResult r = run_gpuscope({"kernels", current_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);  // throws on invalid UTF-8
  EXPECT_NE(j.dump().find("redu\xef\xbf\xbd("), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpuscope::testing
