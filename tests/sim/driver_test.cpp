// The driver through the NVML API: init reference counting, identity, memory, fields, processes.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "driver_harness.hpp"

namespace gpuscope::sim {
namespace {

using testing::DriverHarness;
using ::testing::HasSubstr;

TEST(Driver, CallsBeforeInitAreUninitialized) {
  DriverHarness harness;
  unsigned int count = 0;
  EXPECT_EQ(DeviceGetCount(&count), nvml::kErrorUninitialized);
  EXPECT_EQ(Shutdown(), nvml::kErrorUninitialized);
  nvmlDevice_t bogus = nullptr;
  EXPECT_EQ(DeviceGetHandleByIndex(0, &bogus), nvml::kErrorUninitialized);
}

TEST(Driver, InitIsReferenceCounted) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100x2-gpu-lost"));
  ASSERT_EQ(harness.driver().init(harness.options("/ignored/while/initialised.json")),
            nvml::kSuccess);
  EXPECT_EQ(Shutdown(), nvml::kSuccess);
  unsigned int count = 0;
  EXPECT_EQ(DeviceGetCount(&count), nvml::kSuccess);  // one init still outstanding
  EXPECT_EQ(count, 2U);
  EXPECT_EQ(Shutdown(), nvml::kSuccess);
  EXPECT_EQ(DeviceGetCount(&count), nvml::kErrorUninitialized);
  EXPECT_STREQ(harness.driver().scenario_name(), "h100x2-gpu-lost");
}

TEST(Driver, InitFailsWithAReasonWithoutAScenario) {
  DriverHarness harness;
  DriverOptions options = harness.options("");
  options.scenario_path.reset();
  EXPECT_EQ(harness.driver().init(options), nvml::kErrorDriverNotLoaded);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("GPUSCOPE_SIM_SCENARIO is not set"));
  EXPECT_EQ(harness.driver().init(harness.options(testing::fixture_scenario("bad-range"))),
            nvml::kErrorUnknown);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("bad-range.json: /gpus/2/power/min_w"));
  EXPECT_EQ(harness.driver().init(harness.options("/no/such/scenario.json")),
            nvml::kErrorDriverNotLoaded);
  EXPECT_EQ(harness.driver().init(tl::make_unexpected(std::string("GPUSCOPE_SIM_X=bad"))),
            nvml::kErrorDriverNotLoaded);
  EXPECT_STREQ(harness.driver().last_error(), "GPUSCOPE_SIM_X=bad");
}

TEST(Driver, RefusesAnEpochSoOldTheTimelineCouldNotBeWalked) {
  DriverHarness harness;
  DriverOptions options = harness.options(testing::shipped_scenario("h100"));
  options.epoch_ns = 1'700'000;  // microseconds given as nanoseconds, say: 1970
  EXPECT_EQ(harness.driver().init(options), nvml::kErrorUnknown);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("limited to 7 days"));
}

TEST(Driver, InitErrorFaultFailsInitWithThatCode) {
  DriverHarness harness;
  EXPECT_EQ(harness.driver().init(harness.options(testing::fixture_scenario("driver-not-loaded"))),
            nvml::kErrorDriverNotLoaded);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("init_error"));
  unsigned int count = 0;
  EXPECT_EQ(DeviceGetCount(&count), nvml::kErrorUninitialized);
}

TEST(Driver, ReportsIdentityOfTheModel) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100"));
  nvmlDevice_t device = harness.device(0);
  char text[96];
  ASSERT_EQ(DeviceGetName(device, text, sizeof text), nvml::kSuccess);
  EXPECT_STREQ(text, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(DeviceGetName(device, text, 5), nvml::kErrorInsufficientSize);
  ASSERT_EQ(DeviceGetUUID(device, text, sizeof text), nvml::kSuccess);
  nvmlDevice_t by_uuid = nullptr;
  EXPECT_EQ(DeviceGetHandleByUUID(text, &by_uuid), nvml::kSuccess);
  EXPECT_EQ(by_uuid, device);
  EXPECT_EQ(DeviceGetHandleByUUID("GPU-nope", &by_uuid), nvml::kErrorNotFound);
  unsigned int arch = 0;
  EXPECT_EQ(DeviceGetArchitecture(device, &arch), nvml::kSuccess);
  EXPECT_EQ(arch, nvml::kArchHopper);
  int major = 0, minor = 0;
  EXPECT_EQ(DeviceGetCudaComputeCapability(device, &major, &minor), nvml::kSuccess);
  EXPECT_EQ(major * 10 + minor, 90);
  nvmlPciInfo_t pci{};
  ASSERT_EQ(DeviceGetPciInfo(device, &pci), nvml::kSuccess);
  EXPECT_STREQ(pci.busId, "00000000:18:00.0");
  EXPECT_STREQ(pci.busIdLegacy, "0000:18:00.0");
  EXPECT_EQ(pci.bus, 0x18U);
  EXPECT_EQ(pci.pciDeviceId, 0x233010DEU);
  ASSERT_EQ(SystemGetDriverVersion(text, sizeof text), nvml::kSuccess);
  EXPECT_STREQ(text, "550.54.15");
  int cuda = 0;
  EXPECT_EQ(SystemGetCudaDriverVersion(&cuda), nvml::kSuccess);
  EXPECT_EQ(cuda, 12040);
}

TEST(Driver, RejectsInvalidHandlesAndIndices) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100"));
  nvmlDevice_st foreign;
  unsigned int milliwatts = 0;
  EXPECT_EQ(DeviceGetPowerUsage(&foreign, &milliwatts), nvml::kErrorInvalidArgument);
  EXPECT_EQ(DeviceGetPowerUsage(nullptr, &milliwatts), nvml::kErrorInvalidArgument);
  nvmlDevice_t handle = nullptr;
  EXPECT_EQ(DeviceGetHandleByIndex(1, &handle), nvml::kErrorInvalidArgument);
  EXPECT_EQ(DeviceGetPowerUsage(harness.device(0), nullptr), nvml::kErrorInvalidArgument);
}

TEST(Driver, MemoryInfoSeparatesReservedInVersion2) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100"));
  harness.clock().set_scenario_s(30);
  nvmlMemory_t v1{};
  ASSERT_EQ(DeviceGetMemoryInfo(harness.device(0), &v1), nvml::kSuccess);
  constexpr unsigned long long kMiB = 1ULL << 20U;
  EXPECT_EQ(v1.total, 81559 * kMiB);
  EXPECT_EQ(v1.used, (62 * 1024 + 552) * kMiB);
  EXPECT_EQ(v1.free + v1.used, v1.total);
  nvmlMemory_v2_t v2{};
  EXPECT_EQ(DeviceGetMemoryInfoV2(harness.device(0), &v2), nvml::kErrorArgumentVersionMismatch);
  v2.version = nvml::kMemoryV2Version;
  ASSERT_EQ(DeviceGetMemoryInfoV2(harness.device(0), &v2), nvml::kSuccess);
  EXPECT_EQ(v2.reserved, 552 * kMiB);
  EXPECT_EQ(v2.used, 62 * 1024 * kMiB);
  EXPECT_EQ(v2.free, v1.free);
}

TEST(Driver, FieldValuesReportPerFieldSupport) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100"));
  harness.clock().set_scenario_s(30.05);
  nvmlFieldValue_t values[6] = {};
  values[0].fieldId = nvml::kFieldPowerInstant;
  values[1].fieldId = nvml::kFieldPowerAverage;
  values[2].fieldId = nvml::kFieldTotalEnergyConsumption;
  values[3].fieldId = 9999;  // not a field the driver knows
  values[4].fieldId = nvml::kFieldPowerInstant;
  values[4].scopeId = nvml::kPowerScopeModule;  // only Grace Hopper has module power
  values[5].fieldId = nvml::kFieldPowerCurrentLimit;
  ASSERT_EQ(DeviceGetFieldValues(harness.device(0), 6, values), nvml::kSuccess);
  EXPECT_EQ(values[0].nvmlReturn, nvml::kSuccess);
  EXPECT_EQ(values[0].valueType, nvml::kValueTypeUnsignedInt);
  EXPECT_GT(values[0].value.uiVal, 400000U);
  EXPECT_EQ(values[1].nvmlReturn, nvml::kSuccess);
  unsigned int usage = 0;
  ASSERT_EQ(DeviceGetPowerUsage(harness.device(0), &usage), nvml::kSuccess);
  EXPECT_EQ(values[1].value.uiVal, usage);
  EXPECT_EQ(values[2].valueType, nvml::kValueTypeUnsignedLongLong);
  unsigned long long energy = 0;
  ASSERT_EQ(DeviceGetTotalEnergyConsumption(harness.device(0), &energy), nvml::kSuccess);
  EXPECT_EQ(values[2].value.ullVal, energy);
  EXPECT_EQ(values[3].nvmlReturn, nvml::kErrorNotSupported);
  EXPECT_EQ(values[4].nvmlReturn, nvml::kErrorNotSupported);
  EXPECT_EQ(values[5].value.uiVal, 700000U);
  EXPECT_EQ(values[0].timestamp, harness.clock().realtime_ns() / 1000);
}

TEST(Driver, A100LacksInstantPowerFieldAndGpm) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("a100-nogpm"));
  harness.clock().set_scenario_s(10);
  nvmlFieldValue_t values[2] = {};
  values[0].fieldId = nvml::kFieldPowerInstant;
  values[1].fieldId = nvml::kFieldPowerAverage;
  ASSERT_EQ(DeviceGetFieldValues(harness.device(0), 2, values), nvml::kSuccess);
  EXPECT_EQ(values[0].nvmlReturn, nvml::kErrorNotSupported);
  ASSERT_EQ(values[1].nvmlReturn, nvml::kSuccess);
  unsigned int usage = 0;  // GA100: the latest bucket, not the 1 s average of field 185
  ASSERT_EQ(DeviceGetPowerUsage(harness.device(0), &usage), nvml::kSuccess);
  EXPECT_NE(values[1].value.uiVal, usage);
  nvmlGpmSupport_t support{nvml::kGpmSupportVersion, 1};
  ASSERT_EQ(GpmQueryDeviceSupport(harness.device(0), &support), nvml::kSuccess);
  EXPECT_EQ(support.isSupportedDevice, 0U);
}

TEST(Driver, GraceHopperReportsModulePower) {
  DriverHarness harness;
  const std::string path = harness.dir().file("gh200.json");
  std::FILE* file = std::fopen(path.c_str(), "w");
  std::fputs(R"({"phases": [{"name": "c", "duration_s": 9, "util": 100, "sm_active": 80}],
                 "gpus": [{"model": "GH200"}]})",
             file);
  std::fclose(file);
  harness.init(path);
  harness.clock().set_scenario_s(3);
  nvmlFieldValue_t values[2] = {};
  values[0].fieldId = values[1].fieldId = nvml::kFieldPowerInstant;
  values[1].scopeId = nvml::kPowerScopeModule;
  ASSERT_EQ(DeviceGetFieldValues(harness.device(0), 2, values), nvml::kSuccess);
  ASSERT_EQ(values[1].nvmlReturn, nvml::kSuccess);
  EXPECT_EQ(values[1].value.uiVal, values[0].value.uiVal + 120000U);
}

TEST(Driver, ProcessListFollowsInsufficientSizeSemantics) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100"));
  unsigned int count = 0;
  EXPECT_EQ(DeviceGetComputeRunningProcesses(harness.device(0), &count, nullptr),
            nvml::kErrorInsufficientSize);
  EXPECT_EQ(count, 1U);
  nvmlProcessInfo_t infos[2] = {};
  count = 2;
  ASSERT_EQ(DeviceGetComputeRunningProcesses(harness.device(0), &count, infos), nvml::kSuccess);
  EXPECT_EQ(count, 1U);
  EXPECT_EQ(infos[0].pid, 4242U);
  EXPECT_EQ(infos[0].usedGpuMemory, 63488ULL << 20U);
}

TEST(Driver, ClocksFollowActivity) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100"));
  unsigned int mhz = 0;
  unsigned long long reasons = 0;
  harness.clock().set_scenario_s(1);
  ASSERT_EQ(DeviceGetClockInfo(harness.device(0), nvml::kClockSm, &mhz), nvml::kSuccess);
  EXPECT_EQ(mhz, 345U);
  ASSERT_EQ(DeviceGetCurrentClocksEventReasons(harness.device(0), &reasons), nvml::kSuccess);
  EXPECT_EQ(reasons, nvml::kClocksEventGpuIdle);
  harness.clock().set_scenario_s(20);
  ASSERT_EQ(DeviceGetClockInfo(harness.device(0), nvml::kClockGraphics, &mhz), nvml::kSuccess);
  EXPECT_EQ(mhz, 1980U);
  ASSERT_EQ(DeviceGetClockInfo(harness.device(0), nvml::kClockMem, &mhz), nvml::kSuccess);
  EXPECT_EQ(mhz, 2619U);
  EXPECT_EQ(DeviceGetClockInfo(harness.device(0), 17, &mhz), nvml::kErrorInvalidArgument);
  nvmlUtilization_t utilization{};
  ASSERT_EQ(DeviceGetUtilizationRates(harness.device(0), &utilization), nvml::kSuccess);
  EXPECT_GE(utilization.gpu, 90U);
}

TEST(Driver, ConcurrentCallersAllSucceed) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100x4-straggler"));
  harness.clock().set_scenario_s(12);
  std::vector<nvmlDevice_t> devices;
  for (unsigned int i = 0; i < 4; ++i) devices.push_back(harness.device(i));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      nvmlFieldValue_t value{};
      value.fieldId = nvml::kFieldTotalEnergyConsumption;
      unsigned int milliwatts = 0;
      for (int i = 0; i < 5000; ++i) {
        if (DeviceGetPowerUsage(devices[t], &milliwatts) != nvml::kSuccess) ++failures;
        if (DeviceGetFieldValues(devices[(t + 1) % 4], 1, &value) != nvml::kSuccess) ++failures;
        if (i % 500 == 0 && DeviceSetPowerManagementLimit(devices[t], 500000) != nvml::kSuccess) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0) << harness.driver().last_error();
}

TEST(Driver, ErrorStringsMatchTheRealDriver) {
  EXPECT_STREQ(ErrorString(nvml::kSuccess), "Success");
  EXPECT_STREQ(ErrorString(nvml::kErrorUninitialized), "Uninitialized");
  EXPECT_STREQ(ErrorString(nvml::kErrorNoPermission), "Insufficient Permissions");
  EXPECT_STREQ(ErrorString(nvml::kErrorGpuIsLost), "GPU is lost");
  EXPECT_STREQ(ErrorString(nvml::kErrorUnknown), "Unknown Error");
  EXPECT_STREQ(ErrorString(12345), "Unknown Error");
}

}  // namespace
}  // namespace gpuscope::sim
