// dcgm/abi.hpp: the layouts are checked at compile time (static_assert); here, what a backend
// relies on at run time: version words, blank values, the profiling field ids in catalog order.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dcgm/abi.hpp"
#include "dcgm/entry_points.hpp"
#include "dcgm/library.hpp"

namespace gpuscope::dcgm {
namespace {

TEST(DcgmAbi, VersionWordsAreSizeAndVersion) {
  EXPECT_EQ(make_version(4128, 2), 0x02001020U);
  EXPECT_EQ(kFieldValueV2Version & 0xffffffU, sizeof(dcgmFieldValue_v2));
  EXPECT_EQ(kFieldValueV2Version >> 24, 2U);
  EXPECT_EQ(kStartEmbeddedV2ParamsVersion2, 0x02000050U);
}

TEST(DcgmAbi, BlankValues) {
  EXPECT_TRUE(is_blank(kInt64Blank));
  EXPECT_TRUE(is_blank(kInt64Blank + 2));  // not supported
  EXPECT_FALSE(is_blank(std::int64_t{81920}));
  EXPECT_TRUE(is_blank(kFp64Blank + 1.0));  // not found
  EXPECT_FALSE(is_blank(0.97));
}

TEST(DcgmAbi, ProfilingFieldsAreConsecutive) {
  EXPECT_EQ(kProfSmActive, kProfGrEngineActive + 1);
  EXPECT_EQ(kProfNvlinkRxBytes, 1012);
  EXPECT_EQ(kProfNvlinkRxBytes - kProfGrEngineActive, 11);
}

// The list expands to a function table whose every slot has the DCGM signature it names (a
// wrong parameter list would not compile), and its symbols are DCGM's own names.
TEST(DcgmAbi, EntryPointList) {
  struct Table {
#define SLOT(id, req, params, args, symbol) dcgmReturn_t(*id) params = nullptr;
    GPUSCOPE_DCGM_ENTRY_POINTS(SLOT)
#undef SLOT
  };
  std::vector<std::string> symbols;
#define NAME(id, req, params, args, symbol) symbols.push_back(#symbol);
  GPUSCOPE_DCGM_ENTRY_POINTS(NAME)
#undef NAME
  EXPECT_EQ(sizeof(Table), symbols.size() * sizeof(void*));
  EXPECT_EQ(symbols.front(), "dcgmInit");
  EXPECT_NE(std::find(symbols.begin(), symbols.end(), "dcgmEntitiesGetLatestValues"),
            symbols.end());
  EXPECT_EQ(std::find(symbols.begin(), symbols.end(), "dcgmErrorString"), symbols.end());
}

TEST(DcgmAbi, StatusNames) {
  EXPECT_EQ(status_name(kOk), "DCGM_ST_OK");
  EXPECT_EQ(status_name(kModuleNotLoaded), "DCGM_ST_MODULE_NOT_LOADED");
  EXPECT_EQ(status_name(kProfilingMultiPass), "DCGM_ST_PROFILING_MULTI_PASS");
  EXPECT_EQ(status_name(-67), "DCGM_ST_GPUS_DETACHED");
  EXPECT_EQ(status_name(-2), "DCGM status -2") << "unused";
  EXPECT_EQ(status_name(-68), "DCGM status -68");
  EXPECT_EQ(status_name(5), "DCGM status 5");
}

// The loader: a missing file, a library that is no DCGM (the simulated NVML), and DCGM absent
// from the system are each said plainly.
TEST(DcgmLibrary, MissingFileIsSaid) {
  try {
    Library::open({"/nonexistent/libdcgm.so.4"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.summary(), "cannot load the DCGM library /nonexistent/libdcgm.so.4");
    EXPECT_NE(e.reason().find("No such file"), std::string::npos) << e.reason();
  }
}

TEST(DcgmLibrary, ALibraryThatIsNotDcgmIsRefusedNamingWhatItLacks) {
  try {
    Library::open({GPUSCOPE_TEST_SIM_LIBRARY});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.summary(),
              std::string(GPUSCOPE_TEST_SIM_LIBRARY) + " is not a usable DCGM library");
    EXPECT_NE(e.reason().find("it does not export dcgmInit, dcgmShutdown"), std::string::npos)
        << e.reason();
  }
}

TEST(DcgmLibrary, AbsentDcgmIsSaid) {
  try {
    auto library = Library::open({});
    // A machine with DCGM installed: it loads and has what gpuscope needs.
    EXPECT_NE(library->table().Init.fn, nullptr);
  } catch (const Error& e) {
    EXPECT_EQ(e.summary(), "DCGM is not installed");
    EXPECT_NE(e.reason().find("libdcgm.so.4"), std::string::npos) << e.reason();
  }
}

}  // namespace
}  // namespace gpuscope::dcgm
