// The AMD loader through its real path: dlopen of the simulated AMD SMI and ROCm SMI and of
// Debian's real ROCm SMI, the fallback from AMD SMI to ROCm SMI, and the messages a user sees:
// no library, no AMD GPU, the amdgpu driver missing, permission denied.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "amd/session.hpp"
#include "amd/sysfs_probe.hpp"
#include "sim_env.hpp"

namespace gpuscope::amd {
namespace {

using testing::SimEnvironment;

OpenOptions simulated() {
  OpenOptions options;
  options.amd_smi_path = GPUSCOPE_TEST_SIM_AMD_SMI_LIBRARY;
  options.rocm_smi_path = GPUSCOPE_TEST_SIM_ROCM_SMI_LIBRARY;
  options.simulated = true;
  return options;
}

// Session::open's error, or a test failure when it opens.
Error open_error(const OpenOptions& options) {
  try {
    Session::open(options);
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "the session opened";
  return Error("");
}

TEST(AmdLibrary, ResolvesEveryEntryOfTheSimulatedLibraries) {
  auto amd_smi = AmdSmiLibrary::open(GPUSCOPE_TEST_SIM_AMD_SMI_LIBRARY, true);
  for (const Resolution& r : amd_smi->resolutions()) EXPECT_TRUE(r.found()) << r.id;
  EXPECT_TRUE(amd_smi->has(&AmdSmiApi::Table::GetEnergyCount));
  auto rocm_smi = RocmSmiLibrary::open(GPUSCOPE_TEST_SIM_ROCM_SMI_LIBRARY, true);
  for (const Resolution& r : rocm_smi->resolutions()) EXPECT_TRUE(r.found()) << r.id;
}

TEST(AmdLibrary, AMissingFileIsNamed) {
  try {
    AmdSmiLibrary::open("/nonexistent/libamd_smi.so", false);
    FAIL() << "opened";
  } catch (const Error& error) {
    EXPECT_EQ(error.summary(), "cannot load the AMD SMI library /nonexistent/libamd_smi.so");
    EXPECT_NE(error.hint().find("GPUSCOPE_AMD_SMI_LIBRARY"), std::string::npos);
  }
}

TEST(AmdLibrary, ALibraryWithoutTheRequiredEntriesIsRefused) {
  // The NVML simulation exports no rsmi_* symbol.
  try {
    RocmSmiLibrary::open(GPUSCOPE_TEST_SIM_LIBRARY, false);
    FAIL() << "opened";
  } catch (const Error& error) {
    EXPECT_NE(error.summary().find("is not a usable ROCm SMI library"), std::string::npos);
    EXPECT_EQ(error.reason(),
              "it does not export rsmi_init, rsmi_shut_down, rsmi_num_monitor_devices");
  }
}

TEST(AmdSession, Mi300xThroughAmdSmi) {
  SimEnvironment env(SimEnvironment::shipped("mi300x"));
  const auto session = Session::open(simulated());
  EXPECT_EQ(session->which(), Which::AmdSmi);
  EXPECT_EQ(session->library_version(), "24.6.3.0");
  ASSERT_EQ(session->devices().size(), 8U);
  const Device& device = *session->devices()[0];
  EXPECT_EQ(device.name(), "AMD Instinct MI300X");
  EXPECT_EQ(device.memory_total_bytes(), std::uint64_t{192} << 30U);
  const auto cap = device.power_cap();
  ASSERT_TRUE(cap);
  EXPECT_EQ(cap->current_uw, 750'000'000U);
  EXPECT_EQ(cap->min_uw, 200'000'000U);
  const auto energy = device.energy();
  ASSERT_TRUE(energy);
  EXPECT_FLOAT_EQ(static_cast<float>(energy->resolution_uj), 15.3F);
  EXPECT_GT(energy->timestamp_ns, 0U);
  EXPECT_EQ(device.max_gfx_clock_mhz(), 2100U);
  EXPECT_NE(*session->devices()[0]->pci_bus_id(), *session->devices()[1]->pci_bus_id());
}

TEST(AmdSession, Mi250xGcdsThroughRocmSmiAgreeWithAmdSmi) {
  SimEnvironment env(SimEnvironment::shipped("mi250x"));
  const auto amd_smi = Session::open(simulated());
  OpenOptions rocm_only = simulated();
  rocm_only.amd_smi_path.clear();
  const auto rocm_smi = Session::open(rocm_only);
  EXPECT_EQ(rocm_smi->which(), Which::RocmSmi);
  EXPECT_EQ(rocm_smi->library_version(), "5.2.3");
  ASSERT_EQ(amd_smi->devices().size(), 8U);
  ASSERT_EQ(rocm_smi->devices().size(), 8U);
  for (std::size_t i = 0; i < 8; ++i) {
    const Device& a = *amd_smi->devices()[i];
    const Device& r = *rocm_smi->devices()[i];
    EXPECT_EQ(a.name(), r.name());
    EXPECT_EQ(a.pci_bus_id(), r.pci_bus_id()) << "bus ids decode the same from both formats";
    EXPECT_EQ(a.memory_total_bytes(), r.memory_total_bytes());
    EXPECT_EQ(a.power_cap()->max_uw, r.power_cap()->max_uw);
    EXPECT_EQ(a.max_gfx_clock_mhz(), r.max_gfx_clock_mhz());
  }
}

TEST(AmdSession, FallsBackToRocmSmiWhenAmdSmiFails) {
  SimEnvironment env(SimEnvironment::fixture("amd-rocm-only"));
  const auto session = Session::open(simulated());
  EXPECT_EQ(session->which(), Which::RocmSmi);
  EXPECT_NE(session->fallback_reason().find("amdsmi_init"), std::string::npos)
      << session->fallback_reason();
  EXPECT_NE(session->fallback_reason().find("the scenario has no AMD SMI"), std::string::npos);
  EXPECT_EQ(session->devices().size(), 1U);
}

TEST(AmdSession, NoAmdGpuIsSaidClearly) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  const Error error = open_error(simulated());
  EXPECT_EQ(error.summary(), "no AMD GPU found");
  EXPECT_TRUE(is_no_amd_gpu(error));
  EXPECT_NE(error.reason().find("it lists no AMD GPU"), std::string::npos) << error.reason();
  EXPECT_NE(error.hint().find("--simulate mi300x"), std::string::npos);
}

TEST(AmdSession, PermissionDeniedIsSaidClearly) {
  SimEnvironment env(SimEnvironment::fixture("amd-permission"));
  const Error error = open_error(simulated());
  EXPECT_EQ(error.summary(), "permission denied reading the AMD GPUs' files (ROCm SMI (" +
                                 std::string(GPUSCOPE_TEST_SIM_ROCM_SMI_LIBRARY) + "))");
  EXPECT_NE(error.reason().find("rsmi_init"), std::string::npos) << error.reason();
  EXPECT_NE(error.reason().find("amdsmi_init"), std::string::npos) << error.reason();
  EXPECT_NE(error.hint().find("render groups"), std::string::npos);
}

TEST(AmdSession, DriverNotLoadedIsSaidClearly) {
  SimEnvironment env(SimEnvironment::fixture("amd-driver-not-loaded"));
  OpenOptions amd_only = simulated();
  amd_only.rocm_smi_path.clear();
  const Error error = open_error(amd_only);
  EXPECT_EQ(error.summary(), "the AMD GPU kernel driver (amdgpu) is not loaded");
  EXPECT_NE(error.reason().find("amdsmi_init"), std::string::npos) << error.reason();
  EXPECT_NE(error.hint().find("modprobe amdgpu"), std::string::npos);
}

// Debian 12's librocm-smi64-1 on this machine, which has no AMD GPU: the real library fails its
// init (no /sys/class/drm, or no amdgpu card in it) and sysfs shows no AMD GPU.
TEST(AmdSession, DebiansRocmSmiOnAMachineWithoutAmdGpus) {
  const std::string path = "/usr/lib/librocm_smi64.so.1";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "librocm-smi64-1 is not installed";
  const SysfsFindings findings = probe_sysfs("/");
  if (!findings.gpus.empty()) GTEST_SKIP() << "this machine has an AMD GPU";
  OpenOptions options;
  options.rocm_smi_path = path;
  const Error error = open_error(options);
  EXPECT_EQ(error.summary(), "no AMD GPU found");
  EXPECT_NE(error.reason().find("ROCm SMI (" + path + ") found none"), std::string::npos)
      << error.reason();
  EXPECT_NE(error.reason().find("rsmi_init"), std::string::npos) << error.reason();
}

// A made-up sysfs: an AMD accelerator with no driver bound, one bound to amdgpu, an NVIDIA GPU.
class FakeSysfs : public ::testing::Test {
 protected:
  void device(const std::string& address, const std::string& vendor, const std::string& klass,
              const std::string& driver = {}) {
    const auto dir = std::filesystem::path(root_.path()) / "sys/bus/pci/devices" / address;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "vendor") << vendor << "\n";
    std::ofstream(dir / "class") << klass << "\n";
    if (!driver.empty()) {
      const auto drivers = std::filesystem::path(root_.path()) / "sys/bus/pci/drivers" / driver;
      std::filesystem::create_directories(drivers);
      std::filesystem::create_directory_symlink(drivers, dir / "driver");
    }
  }
  ::gpuscope::testing::TempDir root_;
};

TEST_F(FakeSysfs, AnAmdGpuWithoutItsDriverIsTheDriversFault) {
  device("0000:c1:00.0", "0x1002", "0x120000");
  device("0000:18:00.0", "0x10de", "0x030200", "nvidia");
  const SysfsFindings findings = probe_sysfs(root_.path());
  EXPECT_EQ(findings.gpus, std::vector<std::string>{"0000:c1:00.0"});
  EXPECT_EQ(findings.unbound, std::vector<std::string>{"0000:c1:00.0"});
  const Error error =
      no_amd_gpu_error("ROCm SMI (x)", "rsmi_init: failed", InitProblem::Failed, findings);
  EXPECT_EQ(error.summary(), "the AMD GPU kernel driver (amdgpu) is not loaded");
  EXPECT_NE(error.reason().find("no amdgpu driver is bound to 0000:c1:00.0"), std::string::npos);
}

TEST_F(FakeSysfs, ABoundAmdGpuThatFailsIsTheLibrarysFailure) {
  device("0000:c1:00.0", "0x1002", "0x038000", "amdgpu");
  device("0000:00:01.0", "0x1002", "0x040300");  // the GPU's HDMI audio: not a GPU
  const SysfsFindings findings = probe_sysfs(root_.path());
  EXPECT_EQ(findings.gpus.size(), 1U);
  EXPECT_TRUE(findings.unbound.empty());
  const Error error =
      no_amd_gpu_error("AMD SMI (x)", "amdsmi_init: busy", InitProblem::Failed, findings);
  EXPECT_EQ(error.summary(), "AMD SMI (x) could not initialise");
  EXPECT_NE(error.hint().find("0000:c1:00.0"), std::string::npos);
}

TEST_F(FakeSysfs, NoAmdDeviceMeansNoAmdGpu) {
  device("0000:18:00.0", "0x10de", "0x030200", "nvidia");
  const Error error = no_amd_gpu_error("ROCm SMI (x)", "rsmi_init: failed", InitProblem::Failed,
                                       probe_sysfs(root_.path()));
  EXPECT_TRUE(is_no_amd_gpu(error));
}

}  // namespace
}  // namespace gpuscope::amd
