// The two built libraries export exactly the symbols the entry-point list promises.
#include <dlfcn.h>

#include <string>

#include "sim/entries.hpp"
#include "test_support.hpp"

namespace gpuscope::sim {
namespace {

class Library {
 public:
  explicit Library(const char* path) : handle_(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) ADD_FAILURE() << dlerror();
  }
  ~Library() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  bool has(std::string_view symbol) const {
    return handle_ != nullptr && dlsym(handle_, std::string(symbol).c_str()) != nullptr;
  }

 private:
  void* handle_;
};

TEST(Exports, CurrentLibraryExportsEverySymbolOfEveryEntry) {
  const Library library(GPUSCOPE_SIM_LIBRARY);
  for (std::size_t i = 0; i < kEntryCount; ++i) {
    for (std::string_view symbol : entry_symbols(static_cast<Entry>(i))) {
      EXPECT_TRUE(library.has(symbol)) << symbol;
    }
  }
  EXPECT_TRUE(library.has("nvmlErrorString"));
  EXPECT_TRUE(library.has("gpuscopeSimLastError"));
  EXPECT_TRUE(library.has("gpuscopeSimScenarioName"));
  EXPECT_FALSE(library.has("_ZN8gpuscope3sim4InitEv"));  // internals stay hidden
}

TEST(Exports, LegacyLibraryHasOnlyOldestSymbolsAndNoGpm) {
  const Library library(GPUSCOPE_SIM_LEGACY_LIBRARY);
  for (std::size_t i = 0; i < kEntryCount; ++i) {
    const auto entry = static_cast<Entry>(i);
    const auto symbols = entry_symbols(entry);
    const bool gpm = entry_id(entry).starts_with("Gpm");
    for (std::size_t s = 0; s < symbols.size(); ++s) {
      const bool oldest = s + 1 == symbols.size();
      EXPECT_EQ(library.has(symbols[s]), oldest && !gpm) << symbols[s];
    }
  }
  EXPECT_TRUE(library.has("nvmlErrorString"));
  EXPECT_TRUE(library.has("gpuscopeSimLastError"));
}

TEST(Exports, LastErrorExplainsAFailedInit) {
  const Library library(GPUSCOPE_SIM_LIBRARY);
  void* handle = dlopen(GPUSCOPE_SIM_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  const auto init = reinterpret_cast<int (*)()>(dlsym(handle, "nvmlInit_v2"));
  const auto last_error =
      reinterpret_cast<const char* (*)()>(dlsym(handle, "gpuscopeSimLastError"));
  ASSERT_NE(init, nullptr);
  ASSERT_NE(last_error, nullptr);
  unsetenv("GPUSCOPE_SIM_SCENARIO");
  EXPECT_EQ(init(), 9);  // DRIVER_NOT_LOADED
  EXPECT_THAT(last_error(), ::testing::HasSubstr("GPUSCOPE_SIM_SCENARIO is not set"));
  dlclose(handle);
}

}  // namespace
}  // namespace gpuscope::sim
