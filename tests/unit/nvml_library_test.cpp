// The NVML loader through its real path: dlopen of a library file, symbol resolution with
// fallback, and the errors a user sees when the library is missing or unusable.
#include <gtest/gtest.h>

#include <algorithm>

#include "nvml/library.hpp"
#include "nvml/session.hpp"
#include "sim_env.hpp"

namespace gpuscope::nvml {
namespace {

using testing::SimEnvironment;

const Resolution& resolution_of(const Library& library, const std::string& id) {
  const auto& all = library.resolutions();
  auto it = std::find_if(all.begin(), all.end(), [&](const Resolution& r) { return r.id == id; });
  if (it == all.end()) throw std::runtime_error("no entry " + id);
  return *it;
}

TEST(NvmlLibrary, ResolvesNewestSymbolsOfACurrentDriver) {
  auto library = Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
  EXPECT_EQ(resolution_of(*library, "Init").resolved, "nvmlInit_v2");
  EXPECT_EQ(resolution_of(*library, "DeviceGetCount").resolved, "nvmlDeviceGetCount_v2");
  EXPECT_EQ(resolution_of(*library, "DeviceGetPciInfo").resolved, "nvmlDeviceGetPciInfo_v3");
  EXPECT_EQ(resolution_of(*library, "DeviceGetCurrentClocksEventReasons").resolved,
            "nvmlDeviceGetCurrentClocksEventReasons");
  EXPECT_FALSE(resolution_of(*library, "DeviceGetCount").is_fallback());
  EXPECT_TRUE(library->has(&FunctionTable::GpmMetricsGet));
}

TEST(NvmlLibrary, FallsBackToOlderSymbolsOfAnOldDriver) {
  auto library = Library::open({GPUSCOPE_TEST_LEGACY_LIBRARY, false});
  const auto& count = resolution_of(*library, "DeviceGetCount");
  EXPECT_EQ(count.resolved, "nvmlDeviceGetCount");
  EXPECT_TRUE(count.is_fallback());
  EXPECT_EQ(resolution_of(*library, "Init").resolved, "nvmlInit");
  EXPECT_EQ(resolution_of(*library, "DeviceGetCurrentClocksEventReasons").resolved,
            "nvmlDeviceGetCurrentClocksThrottleReasons");
  EXPECT_EQ(resolution_of(*library, "DeviceGetPciInfo").resolved, "nvmlDeviceGetPciInfo_v2");
}

TEST(NvmlLibrary, FallbackSymbolsWorkEndToEnd) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  auto library = Library::open({GPUSCOPE_TEST_LEGACY_LIBRARY, false});
  Session session(library);
  ASSERT_EQ(session.device_count(), 1U);
  Device device = session.device(0);
  auto reasons = device.clock_event_reasons();
  EXPECT_TRUE(reasons.has_value()) << library->describe(reasons.error());
  auto pci = device.pci_info();
  ASSERT_TRUE(pci.has_value());
  EXPECT_FALSE(pci->bus_id.empty());
}

TEST(NvmlLibrary, MissingOptionalSymbolIsAFailureNotACrash) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  auto library = Library::open({GPUSCOPE_TEST_LEGACY_LIBRARY, false});
  EXPECT_FALSE(library->has(&FunctionTable::GpmSampleAlloc));
  EXPECT_TRUE(resolution_of(*library, "GpmSampleAlloc").resolved.empty());
  Session session(library);
  auto supported = session.device(0).gpm_supported();
  ASSERT_FALSE(supported.has_value());
  EXPECT_EQ(supported.error().code, kErrorFunctionNotFound);
  EXPECT_STREQ(supported.error().symbol, "nvmlGpmQueryDeviceSupport");
  EXPECT_EQ(library->describe(supported.error()),
            "nvmlGpmQueryDeviceSupport: Function Not Found (NVML error 13)");
}

TEST(NvmlLibrary, MissingLibraryNamesThePathAndTheReason) {
  try {
    Library::open({"/nonexistent/libnvidia-ml.so.1", false});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << text;
    EXPECT_NE(text.find("No such file"), std::string::npos) << text;
    EXPECT_NE(text.find("--nvml-library"), std::string::npos) << text;
  }
}

TEST(NvmlLibrary, LibraryWithoutRequiredSymbolsIsRefusedWithTheirNames) {
  try {
    Library::open({GPUSCOPE_TEST_INCOMPLETE_LIBRARY, false});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("is not a usable NVML library"), std::string::npos) << text;
    EXPECT_NE(text.find("nvmlDeviceGetCount_v2 or nvmlDeviceGetCount"), std::string::npos) << text;
    EXPECT_NE(text.find("nvmlShutdown"), std::string::npos) << text;
    // nvmlInit_v2 is exported, so it must not be reported missing.
    EXPECT_EQ(text.find("nvmlInit_v2"), std::string::npos) << text;
  }
}

TEST(NvmlLibrary, TwoLibraryObjectsCoexistInOneProcess) {
  SimEnvironment env(SimEnvironment::shipped("h100x4-straggler"));
  auto first = Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
  auto second = Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
  Session a(first);
  Session b(second);
  EXPECT_EQ(a.device_count(), 4U);
  EXPECT_EQ(b.device_count(), 4U);
  EXPECT_EQ(*a.device(2).uuid(), *b.device(2).uuid());
}

TEST(NvmlLibrary, ErrorTextComesFromTheDriver) {
  auto library = Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
  EXPECT_EQ(library->error_string(kErrorNotSupported), "Not Supported");
  EXPECT_EQ(library->describe(Failure{kErrorGpuIsLost, "nvmlDeviceGetPowerUsage"}),
            "nvmlDeviceGetPowerUsage: GPU is lost (NVML error 15)");
  Error error = library->to_error(Failure{kErrorNoPermission, "nvmlDeviceSetPowerManagementLimit"},
                                  "cannot set the power limit of GPU 0");
  EXPECT_EQ(error.summary(), "cannot set the power limit of GPU 0");
  EXPECT_NE(error.reason().find("Insufficient Permissions"), std::string::npos);
  EXPECT_NE(error.hint().find("root"), std::string::npos);
}

TEST(NvmlSession, InitFailureCarriesTheDriverWordsAndTheSimulatorReason) {
  SimEnvironment env(SimEnvironment::fixture("driver-not-loaded"));
  auto library = Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
  try {
    Session session(library);
    FAIL() << "expected nvmlInit to fail";
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("cannot initialise NVML"), std::string::npos) << text;
    EXPECT_NE(text.find("nvmlInit_v2: Driver Not Loaded (NVML error 9)"), std::string::npos)
        << text;
  }
}

TEST(NvmlSession, MalformedScenarioIsExplainedBySimulator) {
  SimEnvironment env(SimEnvironment::fixture("malformed"));
  auto library = Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
  try {
    Session session(library);
    FAIL() << "expected nvmlInit to fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("malformed.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuscope::nvml
