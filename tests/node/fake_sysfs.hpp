// A made-up sysfs tree for the node energy tests, and a file reader that fails on demand
// (tests run as root, whom chmod 000 does not stop).
#pragma once

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "node/sysfs_file.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::node::testing {

class FakeSysfs {
 public:
  std::filesystem::path root() const { return temp_.path(); }
  std::filesystem::path powercap() const { return root() / "class" / "powercap"; }

  // <root>/<relative> holding text (folders made as needed).
  void write(const std::filesystem::path& relative, const std::string& text) const {
    const auto file = root() / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }

  // A RAPL zone as the kernel lays it out: name, energy_uj, max_energy_range_uj.
  void zone(const std::string& zone, const std::string& name, unsigned long long energy_uj,
            unsigned long long max_uj = 262143328850ULL) const {
    const std::filesystem::path folder = std::filesystem::path("class/powercap") / zone;
    write(folder / "name", name + "\n");
    write(folder / "energy_uj", std::to_string(energy_uj) + "\n");
    write(folder / "max_energy_range_uj", std::to_string(max_uj) + "\n");
  }

  // hwmon<n> as acpi_power_meter makes it on Grace: name "power_meter", the attributes under
  // device/ (power1_average in µW, its interval, the OEM label naming the sensor).
  void meter(int hwmon, const std::string& label, unsigned long long microwatts) const {
    const std::filesystem::path folder = "class/hwmon/hwmon" + std::to_string(hwmon);
    write(folder / "name", "power_meter\n");
    write(folder / "device/power1_average", std::to_string(microwatts) + "\n");
    write(folder / "device/power1_average_interval", "50\n");
    write(folder / "device/power1_oem_info", label + "\n");
    write(folder / "device/power1_is_battery", "0\n");
  }

  void energy(const std::string& zone, unsigned long long energy_uj) const {
    write(std::filesystem::path("class/powercap") / zone / "energy_uj",
          std::to_string(energy_uj) + "\n");
  }

 private:
  gpuscope::testing::TempDir temp_;
};

// Reads files for real, except those given an errno here.
class FaultyReader {
 public:
  void fail(const std::string& path, int error) { faults_[path] = error; }
  void heal(const std::string& path) { faults_.erase(path); }

  ReadFile reader() {
    return [this](const std::string& path) -> tl::expected<std::string, util::SmallFileFailure> {
      const auto fault = faults_.find(path);
      if (fault == faults_.end()) return sysfs_reader()(path);
      return tl::make_unexpected(
          util::SmallFileFailure{fault->second, {}, 0, std::strerror(fault->second)});
    };
  }

 private:
  std::map<std::string, int> faults_;
};

}  // namespace gpuscope::node::testing
