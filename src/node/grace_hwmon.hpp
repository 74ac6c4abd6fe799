// The power meters of NVIDIA Grace and Grace Hopper (GH200) (docs/node-energy.md): ACPI power
// meters the kernel's acpi_power_meter driver exposes as hwmon devices, each attribute pair
// power<i>_average (µW) and power<i>_oem_info naming what it measures, "<Kind> Power Socket <N>"
// (NVIDIA Grace Performance Tuning Guide, "Power Telemetry"). They give power, not energy: the
// energy is the caller's integral of these samples over time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "node/powercap_reader.hpp"
#include "node/sysfs_file.hpp"

namespace gpuscope::node {

enum class GraceSensorKind {
  Module,  // "Module Power Socket N": the whole GH200 module: CPU, its LPDDR, the Hopper GPU and
           // its HBM, regulator losses. Includes the GPU: never add it to GPU energy.
  Grace,   // "Grace Power Socket N": the Grace socket: CPU rail, SoC rail, LPDDR, regulator loss
  Cpu,     // "CPU Power Socket N": the CPU cores' rail; part of grace
  Sysio,   // "SysIO Power Socket N": the SoC / I/O rail; part of grace
};

// "module", "grace", "cpu", "sysio".
const char* grace_sensor_name(GraceSensorKind kind);

struct GracePowerSensor {
  std::string hwmon;  // the hwmon folder: "hwmon3"
  std::string label;  // power<i>_oem_info (or power<i>_label): "Module Power Socket 0"
  GraceSensorKind kind = GraceSensorKind::Grace;
  unsigned socket = 0;
  std::filesystem::path power_file;  // power<i>_average, else power<i>_input, in µW
  bool averaged = false;             // power_file is power<i>_average
  // power<i>_average_interval in ms, when the meter gives it: the window each average covers.
  std::optional<std::uint64_t> average_interval_ms;
  // The module includes the GPU (and its memory): its energy must never be added to the GPUs'
  // energy, nor GPU energy to it. True for module only.
  bool includes_gpu = false;
  // What contains this sensor's power: cpu and sysio are inside grace, grace inside module
  // (GH200). A total adds only sensors no other present sensor contains.
  std::optional<GraceSensorKind> part_of;
};

struct GraceDiscovery {
  std::vector<GracePowerSensor> sensors;  // by hwmon number, then attribute index
  std::vector<std::string> notes;         // power meters left out, and why (for logs)
};

// The Grace power meters under <sysfs_root>/class/hwmon/hwmon*/ and hwmon*/device/ (the ACPI
// power meter keeps its attributes on the ACPI device on the kernels Grace ships with). Only
// meters whose label names a Grace sensor are kept: another machine's power meters (a laptop's
// battery, a GPU's own hwmon) are not the node's and are noted, never read. Absent folder: none.
GraceDiscovery discover_grace_hwmon(const std::filesystem::path& sysfs_root = "/sys",
                                    const ReadFile& read = sysfs_reader());

struct PowerSample {
  std::size_t sensor = 0;  // index into GracePowerReader::sensors()
  std::int64_t mono_ns = 0;
  std::int64_t wall_ns = 0;
  std::uint64_t microwatts = 0;
};

// Reads the sensors' power, each said once when it cannot be read (DomainProblem's `domain` is
// the sensor's index here); a vanished sensor is not read again.
class GracePowerReader {
 public:
  explicit GracePowerReader(std::vector<GracePowerSensor> sensors, ReadFile read = sysfs_reader());

  const std::vector<GracePowerSensor>& sensors() const { return sensors_; }
  void read(std::vector<PowerSample>& out);
  std::vector<DomainProblem> take_problems();

 private:
  std::vector<GracePowerSensor> sensors_;
  std::vector<unsigned char> gone_;
  std::vector<unsigned char> failing_;
  ReadFile read_;
  std::vector<DomainProblem> problems_;
};

}  // namespace gpuscope::node
