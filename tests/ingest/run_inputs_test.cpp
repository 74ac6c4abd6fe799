// The temporary run databases of foreign inputs (ingest::RunInputs): in a private folder under
// $TMPDIR named after the input, kept while the object lives, gone afterwards and when an import
// fails half-way; run databases pass through as they are.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "ingest/import.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;
const fs::path kFolder = fs::path(GPUSCOPE_TEST_FIXTURE_DIR) / "gssr" / "profile_out_JobID_4242";

// $TMPDIR pointed at a test folder for the life of the object.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::string& dir) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    setenv("TMPDIR", dir.c_str(), 1);
  }
  ~ScopedTmpdir() { old_.empty() ? unsetenv("TMPDIR") : setenv("TMPDIR", old_.c_str(), 1); }

 private:
  std::string old_;
};

std::size_t entries(const std::string& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(RunInputs, ForeignInputsLiveInAPrivateFolderWhileNeeded) {
  testing::TempDir tmp;
  ScopedTmpdir scoped(tmp.path());
  fs::path imported;
  {
    RunInputs inputs({kFolder.string(), "run.db"});
    ASSERT_EQ(inputs.paths().size(), 2U);
    EXPECT_EQ(inputs.paths()[0], "run.db") << "run databases pass through, in order";
    imported = inputs.paths()[1];
    EXPECT_EQ(imported.filename(), "profile_out_JobID_4242.db");
    EXPECT_EQ(imported.parent_path().parent_path(), fs::path(tmp.path()));
    EXPECT_TRUE(imported.parent_path().filename().string().starts_with("gpuscope-import-"));
    EXPECT_TRUE(fs::is_regular_file(imported));
  }
  EXPECT_FALSE(fs::exists(imported));
  EXPECT_EQ(entries(tmp.path()), 0U) << "nothing of the import is left in $TMPDIR";
}

TEST(RunInputs, AFailedImportLeavesNothingBehind) {
  testing::TempDir tmp, data;
  const fs::path broken = fs::path(data.path()) / "broken_job_1_step_0_proc_1.json";
  std::ofstream(broken) << R"({"metadata": {"job_id": 1, "step_id": 0, "proc_)";  // cut off
  ScopedTmpdir scoped(tmp.path());
  try {
    RunInputs inputs({kFolder.string(), broken.string()});
    FAIL() << "a cut-off process file must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not complete JSON"), std::string::npos) << e.what();
  }
  EXPECT_EQ(entries(tmp.path()), 0U) << "the temporary folder goes with the error";
}

TEST(ImportInputs, AnInputNoFormatReadsIsAUsageErrorAndNoOutput) {
  testing::TempDir tmp;
  const fs::path other = fs::path(tmp.path()) / "notes.txt";
  std::ofstream(other) << "not data";
  const fs::path out = fs::path(tmp.path()) / "out.db";
  try {
    import_inputs({other}, out, false);
    FAIL() << "a text file is no format gpuscope imports";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find(
                  "is not gssr or nvidia-smi-csv or nvidia-smi-dmon or dcgmi-dmon data"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace gpuscope::ingest
