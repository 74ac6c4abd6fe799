// The nsys export reader on generated fixtures: schema variants, empty and missing tables,
// files that are not nsys exports.
#include "ingest/tools/nsys_export.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.hpp"
#include "kernels/nsys_fixture.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::ingest {
namespace {

using kernels::KernelReport;
using kernels::memcpy_operation;
using kernels::NameColumn;

using testing::NsysSchema;
using testing::TempDir;

const std::string kGemm = "void gemm<float>(int, float const*)";

TEST(NsysReader, CurrentSchemaDemangledNames) {
  TempDir dir;
  testing::write_nsys_export(dir.file("r.sqlite"), NsysSchema::Current);
  const KernelReport e = read_nsys_export(dir.file("r.sqlite"), NameColumn::Demangled);
  EXPECT_TRUE(e.has_kernel_table);
  EXPECT_TRUE(e.notes.empty());
  ASSERT_EQ(e.kernels.size(), 3u);
  EXPECT_EQ(e.kernels.at(kGemm), (std::vector<std::int64_t>{100, 200, 600}));
  EXPECT_EQ(e.kernels.at("relu_kernel(float*)"), (std::vector<std::int64_t>{300, 500}));
  EXPECT_EQ(e.kernels.at("reduce(float const*)"), (std::vector<std::int64_t>{50}));
  ASSERT_EQ(e.memory.size(), 3u);
  EXPECT_EQ(e.memory.at("[CUDA memcpy Host-to-Device]").size(), 2u);
  EXPECT_EQ(e.memory.at("[CUDA memcpy Device-to-Host]").front().bytes, 2000);
  EXPECT_EQ(e.memory.at("[CUDA memset]").front().duration_ns, 200);
}

TEST(NsysReader, CurrentSchemaShortNames) {
  TempDir dir;
  testing::write_nsys_export(dir.file("r.sqlite"), NsysSchema::Current);
  const KernelReport e = read_nsys_export(dir.file("r.sqlite"), NameColumn::ShortName);
  ASSERT_EQ(e.kernels.size(), 3u);
  EXPECT_EQ(e.kernels.at("gemm").size(), 3u);
  EXPECT_EQ(e.kernels.at("relu_kernel").size(), 2u);
  EXPECT_TRUE(e.notes.empty());
}

TEST(NsysReader, LegacySchemaFallsBackToDemangledNamesAndBuiltInLabels) {
  TempDir dir;
  testing::write_nsys_export(dir.file("old.sqlite"), NsysSchema::Legacy);
  const KernelReport e = read_nsys_export(dir.file("old.sqlite"), NameColumn::ShortName);
  ASSERT_EQ(e.kernels.size(), 3u);
  EXPECT_EQ(e.kernels.at(kGemm).size(), 3u);
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_NE(e.notes[0].find("no shortName column"), std::string::npos);
  // No ENUM_CUDA_MEMCPY_OPER: the copy kind is named from CUPTI's enumeration.
  ASSERT_EQ(e.memory.size(), 1u);
  EXPECT_EQ(e.memory.begin()->first, "[CUDA memcpy Host-to-Device]");
}

TEST(NsysReader, InlineTextNamesAreAccepted) {
  TempDir dir;
  testing::write_sqlite(
      dir.file("t.sqlite"),
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER,"
      " demangledName TEXT);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 10, 'k'), (5, 25, 'k');");
  const KernelReport e = read_nsys_export(dir.file("t.sqlite"), NameColumn::Demangled);
  EXPECT_EQ(e.kernels.at("k"), (std::vector<std::int64_t>{10, 20}));
}

TEST(NsysReader, EmptyKernelTableIsANote) {
  TempDir dir;
  testing::write_sqlite(dir.file("e.sqlite"),
                        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER,"
                        " demangledName INTEGER, shortName INTEGER);");
  const KernelReport e = read_nsys_export(dir.file("e.sqlite"), NameColumn::Demangled);
  EXPECT_TRUE(e.has_kernel_table);
  EXPECT_TRUE(e.kernels.empty());
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_NE(e.notes[0].find("no kernels recorded"), std::string::npos);
}

TEST(NsysReader, MissingKernelTableIsANote) {
  TempDir dir;
  testing::write_sqlite(dir.file("m.sqlite"),
                        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                        "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);");
  const KernelReport e = read_nsys_export(dir.file("m.sqlite"), NameColumn::Demangled);
  EXPECT_FALSE(e.has_kernel_table);
  EXPECT_TRUE(e.kernels.empty());
  EXPECT_TRUE(e.memory.empty());
  EXPECT_EQ(e.notes.size(), 1u);
}

TEST(NsysReader, SqliteWithoutNsysTablesIsAUsageError) {
  TempDir dir;
  testing::write_sqlite(dir.file("other.db"), "CREATE TABLE runs (id INTEGER);");
  try {
    read_nsys_export(dir.file("other.db"), NameColumn::Demangled);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("other.db is not an Nsight Systems export"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("nsys export --type sqlite"), std::string::npos);
  }
}

TEST(NsysReader, CorruptFileIsAUsageError) {
  TempDir dir;
  std::ofstream(dir.file("bad.sqlite")) << "this is not a database, just some text\n";
  try {
    read_nsys_export(dir.file("bad.sqlite"), NameColumn::Demangled);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("bad.sqlite"), std::string::npos);
  }
}

TEST(NsysReader, MissingFileIsAUsageError) {
  TempDir dir;
  EXPECT_THROW(read_nsys_export(dir.file("nope.sqlite"), NameColumn::Demangled), Error);
}

TEST(NsysReader, MemcpyOperationNames) {
  EXPECT_EQ(memcpy_operation(8), "[CUDA memcpy Device-to-Device]");
  EXPECT_EQ(memcpy_operation(10), "[CUDA memcpy Peer-to-Peer]");
  EXPECT_EQ(memcpy_operation(42), "[CUDA memcpy kind 42]");
}

}  // namespace
}  // namespace gpuscope::ingest
