// `gpuscope devices` on AMD GPUs through the binary: the simulated MI250X and MI300X nodes, a
// node with both vendors, the loader's messages, and Debian's real ROCm SMI on this machine.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;

std::string fixture(const std::string& name) {
  return std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/" + name + ".json";
}

TEST(AmdDevices, Mi300xNodeInText) {
  auto r = run_gpuscope({"devices", "--simulate", "mi300x"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("GPUs\n"), std::string::npos) << "no NVIDIA header line: " << r.out;
  EXPECT_NE(r.out.find("8 AMD GPUs · AMD SMI 24.6.3.0 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("AMD GPU 7  AMD Instinct MI300X"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Memory        192.0 GiB (196608 MiB)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Power limit   750 W (default 750 W, range 200–750 W)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Max clocks    graphics 2100 MHz"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Saturation    none: AMD SMI and ROCm SMI have no SM, tensor or DRAM"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("energy accumulator"), std::string::npos) << r.out;
}

TEST(AmdDevices, Mi250xGcdsAreDevicesInJson) {
  auto r = run_gpuscope({"devices", "--simulate", "mi250x", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = json::parse(r.out);
  EXPECT_EQ(out["device_count"], 0);
  const auto& amd = out["amd"];
  EXPECT_EQ(amd["library"], "AMD SMI");
  ASSERT_EQ(amd["device_count"], 8);
  for (const auto& d : amd["devices"]) {
    EXPECT_EQ(d["name"], "AMD Instinct MI250X");
    EXPECT_EQ(d["memory_total_bytes"], std::uint64_t{64} << 30U);
    EXPECT_EQ(d["power_limit_w"]["max"], 280.0);
    EXPECT_TRUE(d["capabilities"]["energy_counter"]["supported"].get<bool>());
    EXPECT_TRUE(d["capabilities"]["umc_activity"]["supported"].get<bool>());
    EXPECT_TRUE(d["saturation"]["source"].is_null());
  }
}

TEST(AmdDevices, ANodeWithBothVendorsListsBoth) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("mixed-h100-mi300x")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto nvidia = r.out.find("GPU 0  NVIDIA H100 80GB HBM3");
  const auto amd = r.out.find("2 AMD GPUs · AMD SMI");
  ASSERT_NE(nvidia, std::string::npos) << r.out;
  ASSERT_NE(amd, std::string::npos) << r.out;
  EXPECT_LT(nvidia, amd);
  EXPECT_NE(r.out.find("1 GPU\n"), std::string::npos) << r.out;
  // The AMD GPUs follow the NVIDIA GPU; their own library's index is shown beside.
  EXPECT_NE(r.out.find("AMD GPU 2  AMD Instinct MI300X"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Library index 1 (ROCR_VISIBLE_DEVICES counts so)"), std::string::npos)
      << r.out;
  auto only = run_gpuscope(
      {"devices", "--simulate", fixture("mixed-h100-mi300x"), "--json", "--vendor", "nvidia"});
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_TRUE(json::parse(only.out)["amd"].is_null());
}

TEST(AmdDevices, FallbackToRocmSmiIsSaid) {
  auto r = run_gpuscope({"devices", "--simulate", fixture("amd-rocm-only")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1 AMD GPU · ROCm SMI 5.2.3 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("AMD SMI not used: AMD SMI ("), std::string::npos) << r.out;
}

TEST(AmdDevices, VendorAmdOnAnNvidiaNodeSaysThereIsNone) {
  auto r = run_gpuscope({"devices", "--simulate", "h100", "--vendor", "amd"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gpuscope: error: no AMD GPU found"), std::string::npos) << r.err;
}

TEST(AmdDevices, PermissionDeniedIsTheError) {
  // With NVIDIA and AMD asked for, an AMD problem that is not "none here" is the error shown.
  auto r = run_gpuscope({"devices", "--simulate", fixture("amd-permission")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gpuscope: error: permission denied reading the AMD GPUs' files"),
            std::string::npos)
      << r.err;
}

TEST(AmdDevices, AnAmdProblemBesideWorkingNvidiaGpusIsANote) {
  // The H100 is listed; the MI300X whose files may not be read are said, not hidden.
  auto r = run_gpuscope({"devices", "--simulate", fixture("mixed-h100-amd-permission")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU 0  NVIDIA H100 80GB HBM3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: AMD GPUs not listed: permission denied reading the AMD GPUs' files"),
            std::string::npos)
      << r.out;
  auto j = run_gpuscope({"devices", "--simulate", fixture("mixed-h100-amd-permission"), "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json doc = json::parse(j.out);
  ASSERT_EQ(doc["notes"].size(), 1U) << j.out;
  EXPECT_EQ(doc["notes"][0].get<std::string>().rfind("AMD GPUs not listed: permission denied", 0),
            0U);
  EXPECT_EQ(doc["device_count"], 1);
  // A node with no AMD GPU says nothing about AMD.
  auto plain = run_gpuscope({"devices", "--simulate", "h100", "--json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(json::parse(plain.out)["notes"].empty()) << plain.out;
  // --vendor nvidia asks nothing of the AMD libraries.
  auto only = run_gpuscope(
      {"devices", "--simulate", fixture("mixed-h100-amd-permission"), "--vendor", "nvidia"});
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_EQ(only.out.find("note:"), std::string::npos) << only.out;
}

TEST(AmdDevices, UnknownVendorIsAUsageError) {
  auto r = run_gpuscope({"devices", "--simulate", "mi300x", "--vendor", "intel"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--vendor intel is not a GPU vendor"), std::string::npos) << r.err;
}

// The real loader path against Debian 12's ROCm SMI (scripts/setup.sh installs it). This machine
// has no AMD GPU: the library's init fails, and what it prints to stderr is folded into one line.
TEST(AmdDevices, DebiansRocmSmiSaysNoAmdGpu) {
  const std::string path = "/usr/lib/librocm_smi64.so.1";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "librocm-smi64-1 is not installed";
  if (std::filesystem::exists("/sys/module/amdgpu")) GTEST_SKIP() << "amdgpu is loaded here";
  auto r = run_gpuscope({"devices", "--vendor", "amd"}, {{"GPUSCOPE_ROCM_SMI_LIBRARY", path}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(
      r.err.rfind("gpuscope: error: no AMD GPU found (ROCm SMI (" + path + ") found none (", 0), 0U)
      << r.err;
  EXPECT_NE(r.err.find("rsmi_init"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--simulate mi300x"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpuscope::testing
