// util::LoadedLibrary against real shared libraries (the simulated NVML, and a two-symbol
// stand-in): an entry resolves to its newest symbol or falls back to an older one, a missing
// optional entry is a null slot and a missing required one is named; the handle is closed with
// the object; call_entry turns a missing function or a bad status into a CallFailure.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/dynamic_library.hpp"
#include "util/loaded_library.hpp"

namespace gpuscope::util {
namespace {

using InitFn = int();

std::unique_ptr<LoadedLibrary> load(const char* path) {
  const OpenedLibrary opened = dlopen_first({path});
  if (opened.handle == nullptr) throw std::runtime_error(opened.error);
  return std::make_unique<LoadedLibrary>(opened.handle, opened.name);
}

TEST(LoadedLibrary, ResolvesTheFirstExportedSymbolAndRecordsHow) {
  const auto library = load(GPUSCOPE_TEST_SIM_LIBRARY);
  Entry<InitFn> newest;
  library->resolve(newest, "Init", Requirement::Required, {"nvmlInit_v2", "nvmlInit"});
  EXPECT_NE(newest.fn, nullptr);
  EXPECT_STREQ(newest.symbol, "nvmlInit_v2");

  Entry<InitFn> fallback;
  library->resolve(fallback, "Later", Requirement::Required, {"gpuscopeNoSuchInit", "nvmlInit"});
  EXPECT_NE(fallback.fn, nullptr);
  EXPECT_STREQ(fallback.symbol, "nvmlInit");

  ASSERT_EQ(library->resolutions().size(), 2U);
  const Resolution& first = library->resolutions()[0];
  EXPECT_EQ(first.id, "Init");
  EXPECT_EQ(first.candidates, (std::vector<std::string>{"nvmlInit_v2", "nvmlInit"}));
  EXPECT_EQ(first.resolved, "nvmlInit_v2");
  EXPECT_FALSE(first.is_fallback());
  const Resolution& second = library->resolutions()[1];
  EXPECT_EQ(second.resolved, "nvmlInit");
  EXPECT_TRUE(second.is_fallback());
  EXPECT_EQ(library->missing_required(), "");
  EXPECT_EQ(library->path(), GPUSCOPE_TEST_SIM_LIBRARY);
}

TEST(LoadedLibrary, AMissingOptionalEntryIsANullSlotNamedByItsPreferredSymbol) {
  const auto library = load(GPUSCOPE_TEST_SIM_LIBRARY);
  Entry<InitFn> entry;
  library->resolve(entry, "Absent", Requirement::Optional, {"gpuscopeNoSuchA", "gpuscopeNoSuchB"});
  EXPECT_EQ(entry.fn, nullptr);
  EXPECT_STREQ(entry.symbol, "gpuscopeNoSuchA");
  EXPECT_FALSE(library->resolutions().front().found());
  EXPECT_FALSE(library->resolutions().front().is_fallback());
  EXPECT_EQ(library->missing_required(), "");
}

TEST(LoadedLibrary, MissingRequiredEntriesAreNamedWithTheirCandidates) {
  const auto library = load(GPUSCOPE_TEST_SIM_LIBRARY);
  Entry<InitFn> a;
  Entry<InitFn> b;
  Entry<InitFn> c;
  library->resolve(a, "A", Requirement::Required, {"gpuscopeNoSuchA_v2", "gpuscopeNoSuchA"});
  library->resolve(b, "B", Requirement::Required, {"nvmlInit_v2"});
  library->resolve(c, "C", Requirement::Required, {"gpuscopeNoSuchC"});
  EXPECT_EQ(library->missing_required(), "gpuscopeNoSuchA_v2 or gpuscopeNoSuchA, gpuscopeNoSuchC");
}

TEST(LoadedLibrary, LooksUpAFunctionWithoutRecordingIt) {
  const auto library = load(GPUSCOPE_TEST_SIM_LIBRARY);
  EXPECT_NE(library->function<const char*()>("gpuscopeSimLastError"), nullptr);
  EXPECT_EQ(library->function<const char*()>("gpuscopeNoSuchFunction"), nullptr);
  EXPECT_TRUE(library->resolutions().empty());
}

TEST(LoadedLibrary, ClosesTheLibraryWithTheObject) {
  const char* path = GPUSCOPE_TEST_INCOMPLETE_LIBRARY;
  {
    const auto library = load(path);
    void* again = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(again, nullptr) << "not loaded while the object lives";
    dlclose(again);
  }
  EXPECT_EQ(dlopen(path, RTLD_NOW | RTLD_NOLOAD), nullptr) << "still loaded";
}

int halve(int value) {
  return value / 2;
}

TEST(CallEntry, SucceedsFailsWithTheStatusOrWithNotFound) {
  const Entry<int(int)> entry{&halve, "halve"};
  EXPECT_TRUE(call_entry(entry, 0, 13, 1));
  const CallStatus<int> failed = call_entry(entry, 0, 13, 8);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, 4);
  EXPECT_STREQ(failed.error().symbol, "halve");
  const Entry<int(int)> missing{nullptr, "absent"};
  const CallStatus<int> not_found = call_entry(missing, 0, 13, 8);
  ASSERT_FALSE(not_found);
  EXPECT_EQ(not_found.error().code, 13);
  EXPECT_STREQ(not_found.error().symbol, "absent");
}

}  // namespace
}  // namespace gpuscope::util
