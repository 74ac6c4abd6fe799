// node/grace_hwmon: the power meters of a GH200-like tree (module, grace, cpu and sysio of one
// socket, attributes on the ACPI device as Grace's kernels put them), a two-socket Grace CPU
// superchip without a module, meters that are not Grace's, and a sensor that vanishes.
#include "node/grace_hwmon.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "fake_sysfs.hpp"

namespace gpuscope::node {
namespace {

using testing::FakeSysfs;
using testing::FaultyReader;

const GracePowerSensor& by_kind(const GraceDiscovery& found, GraceSensorKind kind) {
  const auto it = std::find_if(found.sensors.begin(), found.sensors.end(),
                               [&](const GracePowerSensor& s) { return s.kind == kind; });
  if (it == found.sensors.end()) throw std::runtime_error("no sensor");
  return *it;
}

void gh200(const FakeSysfs& sysfs) {
  sysfs.write("class/hwmon/hwmon0/name", "nvme\n");
  sysfs.write("class/hwmon/hwmon0/temp1_input", "41850\n");
  sysfs.meter(1, "Module Power Socket 0", 612'000'000);
  sysfs.meter(2, "Grace Power Socket 0", 98'000'000);
  sysfs.meter(3, "CPU Power Socket 0", 61'000'000);
  sysfs.meter(4, "SysIO Power Socket 0", 19'000'000);
}

TEST(GraceHwmon, Gh200ModuleIncludesTheGpuAndContainsTheRest) {
  FakeSysfs sysfs;
  gh200(sysfs);
  const auto found = discover_grace_hwmon(sysfs.root());
  ASSERT_EQ(found.sensors.size(), 4U);

  const auto& module = by_kind(found, GraceSensorKind::Module);
  EXPECT_EQ(module.label, "Module Power Socket 0");
  EXPECT_EQ(module.hwmon, "hwmon1");
  EXPECT_EQ(module.socket, 0U);
  EXPECT_TRUE(module.includes_gpu);
  EXPECT_FALSE(module.part_of);
  EXPECT_TRUE(module.averaged);
  EXPECT_EQ(module.average_interval_ms, 50U);
  EXPECT_EQ(module.power_file, sysfs.root() / "class/hwmon/hwmon1/device/power1_average");

  const auto& grace = by_kind(found, GraceSensorKind::Grace);
  EXPECT_FALSE(grace.includes_gpu);
  EXPECT_EQ(grace.part_of, GraceSensorKind::Module);
  EXPECT_EQ(by_kind(found, GraceSensorKind::Cpu).part_of, GraceSensorKind::Grace);
  EXPECT_EQ(by_kind(found, GraceSensorKind::Sysio).part_of, GraceSensorKind::Grace);
  EXPECT_FALSE(by_kind(found, GraceSensorKind::Cpu).includes_gpu);

  GracePowerReader reader(found.sensors);
  std::vector<PowerSample> samples;
  reader.read(samples);
  ASSERT_EQ(samples.size(), 4U);
  EXPECT_EQ(samples[0].microwatts, 612'000'000U);
  EXPECT_EQ(samples[3].microwatts, 19'000'000U);
  EXPECT_GT(samples[3].mono_ns, 0);
  EXPECT_TRUE(reader.take_problems().empty());
}

// A Grace CPU superchip: two sockets, no module, so grace is the top of each socket.
TEST(GraceHwmon, TwoSocketGraceWithoutModule) {
  FakeSysfs sysfs;
  sysfs.meter(2, "Grace Power Socket 0", 1);
  sysfs.meter(10, "Grace Power Socket 1", 2);
  sysfs.meter(3, "CPU Power Socket 1", 3);
  const auto found = discover_grace_hwmon(sysfs.root());
  ASSERT_EQ(found.sensors.size(), 3U);
  EXPECT_EQ(found.sensors[0].hwmon, "hwmon2");
  EXPECT_EQ(found.sensors[1].hwmon, "hwmon3");
  EXPECT_EQ(found.sensors[2].hwmon, "hwmon10");
  EXPECT_EQ(found.sensors[2].socket, 1U);
  EXPECT_FALSE(found.sensors[0].part_of);
  EXPECT_FALSE(found.sensors[2].part_of);
  EXPECT_EQ(found.sensors[1].part_of, GraceSensorKind::Grace);
  EXPECT_TRUE(std::none_of(found.sensors.begin(), found.sensors.end(),
                           [](const GracePowerSensor& s) { return s.includes_gpu; }));
}

// Meters in the hwmon folder itself with a label file and power<i>_input; others left out.
TEST(GraceHwmon, OtherPowerMetersAreLeftOutWithANote) {
  FakeSysfs sysfs;
  sysfs.write("class/hwmon/hwmon0/name", "amdgpu\n");
  sysfs.write("class/hwmon/hwmon0/power1_average", "40000000\n");
  sysfs.write("class/hwmon/hwmon1/name", "power_meter\n");
  sysfs.write("class/hwmon/hwmon1/device/power1_average", "9\n");
  sysfs.write("class/hwmon/hwmon1/device/power1_oem_info", "Chassis Power\n");
  sysfs.write("class/hwmon/hwmon2/name", "grace\n");
  sysfs.write("class/hwmon/hwmon2/power2_input", "77\n");
  sysfs.write("class/hwmon/hwmon2/power2_label", "CPU Power Socket 0\n");

  const auto found = discover_grace_hwmon(sysfs.root());
  ASSERT_EQ(found.sensors.size(), 1U);
  EXPECT_EQ(found.sensors[0].kind, GraceSensorKind::Cpu);
  EXPECT_FALSE(found.sensors[0].averaged);
  EXPECT_EQ(found.sensors[0].power_file, sysfs.root() / "class/hwmon/hwmon2/power2_input");
  ASSERT_EQ(found.notes.size(), 2U);
  EXPECT_NE(found.notes[0].find("hwmon0 power1 (no label)"), std::string::npos);
  EXPECT_NE(found.notes[1].find("Chassis Power"), std::string::npos);
}

TEST(GraceHwmon, NoHwmonFolderFindsNothing) {
  FakeSysfs sysfs;
  sysfs.write("class/powercap/.keep", "");
  EXPECT_TRUE(discover_grace_hwmon(sysfs.root()).sensors.empty());
}

TEST(GraceHwmon, SensorThatVanishesIsSaidOnceAndFailingOneOnce) {
  FakeSysfs sysfs;
  gh200(sysfs);
  const auto found = discover_grace_hwmon(sysfs.root());
  FaultyReader faults;
  GracePowerReader reader(found.sensors, faults.reader());
  std::filesystem::remove_all(sysfs.root() / "class/hwmon/hwmon3");
  faults.fail(found.sensors[3].power_file.string(), EACCES);
  std::vector<PowerSample> samples;
  reader.read(samples);
  reader.read(samples);
  ASSERT_EQ(samples.size(), 2U);  // module and grace
  EXPECT_EQ(samples[1].sensor, 1U);
  const auto problems = reader.take_problems();
  ASSERT_EQ(problems.size(), 2U);
  EXPECT_EQ(problems[0].domain, 2U);
  EXPECT_EQ(problems[0].kind, ProblemKind::Vanished);
  EXPECT_EQ(problems[1].kind, ProblemKind::Unreadable);
  EXPECT_NE(problems[1].message.find("SysIO Power Socket 0"), std::string::npos);
}

TEST(GraceHwmon, SensorNames) {
  EXPECT_STREQ(grace_sensor_name(GraceSensorKind::Module), "module");
  EXPECT_STREQ(grace_sensor_name(GraceSensorKind::Sysio), "sysio");
}

}  // namespace
}  // namespace gpuscope::node
