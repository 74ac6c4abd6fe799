// `gpuscope devices` against every shipped scenario and every error path, through the binary.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;

std::vector<std::string> shipped_scenarios() {
  auto r = run_gpuscope({"scenarios", "--json"});
  std::vector<std::string> names;
  for (const auto& s : json::parse(r.out)) names.push_back(s["name"]);
  return names;
}

class DevicesOnScenario : public ::testing::TestWithParam<std::string> {
 protected:
  TempDir dir_;
  std::map<std::string, std::string> env() const {
    return {{"GPUSCOPE_SIM_STATE", dir_.file("state.json")}};
  }
};

TEST_P(DevicesOnScenario, JsonDescribesEveryGpuConsistently) {
  auto r = run_gpuscope({"devices", "--simulate", GetParam(), "--json"}, env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = json::parse(r.out);
  json listing = json::parse(run_gpuscope({"scenarios", "--json"}).out);
  std::size_t expected = 0;
  for (const auto& s : listing) {
    if (s["name"] == GetParam()) expected = s["gpus"];
  }
  // NVIDIA GPUs through NVML, AMD GPUs (an MI250X's GCDs each) through AMD SMI.
  const std::size_t amd = out["amd"].is_null() ? 0 : out["amd"]["device_count"].get<std::size_t>();
  EXPECT_EQ(out["device_count"].get<std::size_t>() + amd, expected);
  EXPECT_EQ(out["simulated_scenario"], GetParam());
  EXPECT_FALSE(out["driver_version"].is_null());
  std::set<std::string> uuids, buses;
  for (const auto& d : out["devices"]) {
    ASSERT_TRUE(d["error"].is_null()) << d["error"];
    uuids.insert(d["uuid"].get<std::string>());
    buses.insert(d["pci_bus_id"].get<std::string>());
    const auto& power = d["power_limit_w"];
    EXPECT_LE(power["min"].get<double>(), power["default"].get<double>());
    EXPECT_LE(power["default"].get<double>(), power["max"].get<double>());
    EXPECT_LE(power["current"].get<double>(), power["max"].get<double>());
    EXPECT_GT(d["memory_total_bytes"].get<double>(), 0);
    EXPECT_GT(d["max_clocks_mhz"]["sm"].get<int>(), 0);
    const bool hopper = d["architecture"] == "Hopper";
    EXPECT_EQ(d["capabilities"]["gpm"]["supported"].get<bool>(), hopper) << d["name"];
  }
  EXPECT_EQ(uuids.size(), out["devices"].size()) << "UUIDs must be unique";
  EXPECT_EQ(buses.size(), out["devices"].size()) << "PCI bus ids must be unique";
}

TEST_P(DevicesOnScenario, TextListsEveryGpu) {
  auto r = run_gpuscope({"devices", "--simulate", GetParam()}, env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const bool amd = GetParam().starts_with("mi");
  EXPECT_NE(r.out.find(amd ? "AMD GPU 0  AMD Instinct" : "GPU 0  NVIDIA"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Supports"), std::string::npos);
  EXPECT_NE(r.out.find("simulated GPUs: scenario " + GetParam()), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Shipped, DevicesOnScenario, ::testing::ValuesIn(shipped_scenarios()),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

std::string fixture(const std::string& name) {
  return std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/" + name + ".json";
}

TEST(Devices, StragglerScenarioHasFourH100s) {
  auto r = run_gpuscope({"devices", "--simulate", "h100x4-straggler", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = json::parse(r.out);
  ASSERT_EQ(out["device_count"], 4);
  for (const auto& d : out["devices"]) EXPECT_EQ(d["name"], "NVIDIA H100 80GB HBM3");
}

TEST(Devices, NoDriverSaysSoAndSuggestsSimulate) {
  if (void* handle = dlopen("libnvidia-ml.so.1", RTLD_LAZY); handle != nullptr) {
    dlclose(handle);
    GTEST_SKIP() << "this machine has an NVIDIA driver";
  }
  auto r = run_gpuscope({"devices"}, {{"GPUSCOPE_NVML_LIBRARY", "\x01"}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gpuscope: error: no NVIDIA driver found (libnvidia-ml.so.1"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("use --simulate SCENARIO"), std::string::npos) << r.err;
}

TEST(Devices, NvmlLibraryOptionLoadsThatFile) {
  auto r = run_gpuscope({"devices", "--nvml-library", "/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot load the NVML library /nonexistent/libnvidia-ml.so.1"),
            std::string::npos)
      << r.err;
}

TEST(Devices, NvmlLibraryOptionWithTheSimulatedLibrary) {
  // The same binary against a library named by path, as for a driver in a non-standard place.
  auto r = run_gpuscope(
      {"devices", "--json", "--nvml-library", GPUSCOPE_TEST_SIM_LIBRARY},
      {{"GPUSCOPE_SIM_SCENARIO", std::string(GPUSCOPE_TEST_SCENARIO_DIR) + "/a100-nogpm.json"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["devices"][0]["architecture"], "Ampere");
}

TEST(Devices, UnknownScenarioIsAUsageErrorListingTheShippedOnes) {
  auto r = run_gpuscope({"devices", "--simulate", "h1000"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown scenario 'h1000'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("h100x4-straggler"), std::string::npos) << r.err;
}

TEST(Devices, DriverNotLoadedIsExplained) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("driver-not-loaded")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot initialise NVML"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Driver Not Loaded"), std::string::npos) << r.err;
}

TEST(Devices, MalformedScenarioNamesTheFile) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("malformed")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("malformed.json"), std::string::npos) << r.err;
}

TEST(Devices, UnknownScenarioKeyIsRejected) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("unknown-key")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown-key.json"), std::string::npos) << r.err;
}

TEST(Devices, SlowDriverStillAnswers) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("slow-calls"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(json::parse(r.out)["device_count"].get<int>(), 1);
}

TEST(Devices, UnsupportedCallsShowAsUnsupported) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("not-supported"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto d = json::parse(r.out)["devices"][0];
  EXPECT_FALSE(d["capabilities"]["energy_counter"]["supported"].get<bool>());
  EXPECT_EQ(d["capabilities"]["energy_counter"]["reason"], "Not Supported");
}

TEST(Devices, LostGpuIsListedAsUnavailable) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("gpu-lost-at-start"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = json::parse(r.out);
  ASSERT_EQ(out["device_count"], 2);
  EXPECT_TRUE(out["devices"][0]["error"].is_null());
  ASSERT_TRUE(out["devices"][1]["error"].is_string()) << out.dump(2);
  EXPECT_NE(out["devices"][1]["error"].get<std::string>().find("GPU is lost"), std::string::npos);
}

TEST(Devices, MigDevicesAreListedUnderTheirGpu) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("h100-mig-mixed"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = json::parse(r.out);
  ASSERT_EQ(out["device_count"], 1);  // GPUs; the MIG devices are under theirs
  const auto& gpu = out["devices"][0];
  EXPECT_EQ(gpu["mig_enabled"], true);
  ASSERT_EQ(gpu["mig_devices"].size(), 3U) << gpu.dump(2);
  const auto& first = gpu["mig_devices"][0];
  EXPECT_EQ(first["index"], 1001);
  EXPECT_EQ(first["uuid"], "MIG-b1000000-0000-5000-8000-000000000041");
  EXPECT_EQ(first["memory_total_bytes"], 40448ULL << 20U);
  EXPECT_EQ(first["mig"]["parent_index"], 0);
  EXPECT_EQ(first["mig"]["gpu_instance_id"], 1);
  EXPECT_EQ(first["mig"]["profile"], "4g.40gb");
  EXPECT_EQ(first["mig"]["gpu_slices"], 4);
  EXPECT_EQ(first["mig"]["parent_slices"], 7);
  EXPECT_EQ(first["mig"]["multiprocessors"], 64);
  EXPECT_TRUE(first["capabilities"]["gpm"]["supported"].get<bool>());
  EXPECT_EQ(first["saturation"]["source"], "gpm");
  // NVML refuses the utilization rates of a GPU in MIG mode.
  EXPECT_FALSE(gpu["capabilities"]["utilization"]["supported"].get<bool>());

  auto text = run_gpuscope({"devices", "--simulate", fixture("h100-mig-mixed")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("1 GPU\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("MIG           on, 3 MIG devices"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("MIG devices   GI 1  4g.40gb  4/7 slices  64 SMs  39.5 GiB  "
                          "MIG-b1000000-0000-5000-8000-000000000041  (index 1001)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("GI 7  1g.10gb  1/7 slices  16 SMs"), std::string::npos) << text.out;
}

TEST(Devices, A100MigDevicesTakeDcgmsGpuInstanceEntities) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("a100-mig-mixed"), "--json"},
                        {{"GPUSCOPE_SIM_STATE", TempDir().file("state.json")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto gpu = json::parse(r.out)["devices"][0];
  ASSERT_EQ(gpu["mig_devices"].size(), 4U);
  for (const auto& m : gpu["mig_devices"]) {
    EXPECT_FALSE(m["capabilities"]["gpm"]["supported"].get<bool>());
    EXPECT_EQ(m["saturation"]["source"], "dcgm");
    EXPECT_NE(m["saturation"]["detail"].get<std::string>().find("DCGM's GPU-instance entity"),
              std::string::npos);
  }
  EXPECT_EQ(gpu["mig_devices"][3]["mig"]["gpu_instance_id"], 8);
  EXPECT_EQ(gpu["mig_devices"][3]["index"], 1008);
}

TEST(Devices, MigOnWithoutInstancesSaysSo) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("h100-mig-empty")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("MIG           on, no MIG devices"), std::string::npos) << r.out;
  auto j = run_gpuscope({"devices", "--simulate", fixture("h100-mig-empty"), "--json"});
  const auto gpu = json::parse(j.out)["devices"][0];
  EXPECT_EQ(gpu["mig_enabled"], true);
  EXPECT_TRUE(gpu["mig_devices"].empty());
}

TEST(Devices, MigModeOffIsSaid) {
  auto r = run_gpuscope({"devices", "--simulate", "h100", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["devices"][0]["mig_enabled"], false);
}

}  // namespace
}  // namespace gpuscope::testing
