// The devices listing, from a hand-built description (no driver involved).
#include <gtest/gtest.h>

#include "report/devices_view.hpp"

namespace gpuscope::report {
namespace {

SystemDescription sample_system() {
  SystemDescription system;
  system.library_path = "libnvidia-ml.so.1";
  system.driver_version = "550.54.15";
  system.cuda_driver_version = "12.4";
  DeviceDescription d;
  d.index = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-12345678-1234-1234-1234-123456789abc";
  d.pci_bus_id = "00000000:18:00.0";
  d.architecture = "Hopper";
  d.compute_capability = "9.0";
  d.memory_total_bytes = 81559ULL * 1024 * 1024;
  d.power_limit_w = 500;
  d.enforced_power_limit_w = 500;
  d.default_power_limit_w = 700;
  d.min_power_limit_w = 200;
  d.max_power_limit_w = 700;
  d.max_sm_clock_mhz = 1980;
  d.max_memory_clock_mhz = 2619;
  d.capabilities = {{"gpm", "GPM", true, ""},
                    {"module_power", "module power", false, "Not Supported"}};
  system.devices.push_back(d);
  DeviceDescription lost;
  lost.index = 1;
  lost.error = "nvmlDeviceGetHandleByIndex_v2: GPU is lost (NVML error 15)";
  system.devices.push_back(lost);
  return system;
}

TEST(DevicesView, TextShowsEveryField) {
  const std::string text = devices_text(sample_system());
  EXPECT_NE(text.find("driver 550.54.15"), std::string::npos) << text;
  EXPECT_NE(text.find("2 GPUs"), std::string::npos);
  EXPECT_NE(text.find("GPU 0  NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(text.find("79.6 GiB (81559 MiB)"), std::string::npos) << text;
  EXPECT_NE(text.find("500 W (default 700 W, range 200–700 W)"), std::string::npos) << text;
  EXPECT_NE(text.find("SM 1980 MHz, memory 2619 MHz"), std::string::npos);
  EXPECT_NE(text.find("module power: Not Supported"), std::string::npos);
  EXPECT_NE(text.find("GPU 1  unavailable: nvmlDeviceGetHandleByIndex_v2: GPU is lost"),
            std::string::npos);
}

TEST(DevicesView, JsonHasTheDocumentedShape) {
  const auto json = devices_json(sample_system());
  EXPECT_EQ(json["device_count"], 2);
  EXPECT_EQ(json["driver_version"], "550.54.15");
  EXPECT_TRUE(json["simulated_scenario"].is_null());
  const auto& d = json["devices"][0];
  EXPECT_EQ(d["uuid"], "GPU-12345678-1234-1234-1234-123456789abc");
  EXPECT_EQ(d["power_limit_w"]["current"], 500.0);
  EXPECT_EQ(d["power_limit_w"]["default"], 700.0);
  EXPECT_EQ(d["max_clocks_mhz"]["sm"], 1980);
  EXPECT_TRUE(d["max_clocks_mhz"]["graphics"].is_null());  // missing stays null, never 0
  EXPECT_EQ(d["capabilities"]["gpm"]["supported"], true);
  EXPECT_EQ(d["capabilities"]["module_power"]["reason"], "Not Supported");
  EXPECT_EQ(json["devices"][1]["error"],
            "nvmlDeviceGetHandleByIndex_v2: GPU is lost (NVML error 15)");
}

}  // namespace
}  // namespace gpuscope::report
