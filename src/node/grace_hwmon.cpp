#include "node/grace_hwmon.hpp"

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "core/clock.hpp"
#include "util/number_text.hpp"

namespace gpuscope::node {

namespace fs = std::filesystem;

namespace {

struct GraceLabel {
  GraceSensorKind kind;
  unsigned socket;
};

// "Module Power Socket 0" → module, 0. The kind word as NVIDIA writes it; nothing else matches.
std::optional<GraceLabel> parse_label(const std::string& label) {
  constexpr std::string_view kMiddle = " Power Socket ";
  const auto at = label.find(kMiddle);
  if (at == std::string::npos) return std::nullopt;
  const auto socket = util::parse_unsigned(std::string_view(label).substr(at + kMiddle.size()));
  if (!socket || *socket > 255) return std::nullopt;
  static const std::map<std::string, GraceSensorKind, std::less<>> kKinds = {
      {"Module", GraceSensorKind::Module},
      {"Grace", GraceSensorKind::Grace},
      {"CPU", GraceSensorKind::Cpu},
      {"SysIO", GraceSensorKind::Sysio}};
  const auto kind = kKinds.find(std::string_view(label).substr(0, at));
  if (kind == kKinds.end()) return std::nullopt;
  return GraceLabel{kind->second, static_cast<unsigned>(*socket)};
}

// The attribute indexes i of power<i>_average / power<i>_input in a folder, each once.
std::set<unsigned long long> power_indexes(const fs::path& folder) {
  std::set<unsigned long long> indexes;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, 5, "power") != 0) continue;
    const auto underscore = name.find('_');
    if (underscore == std::string::npos) continue;
    const std::string_view tail = std::string_view(name).substr(underscore);
    if (tail != "_average" && tail != "_input") continue;
    if (const auto index = util::parse_unsigned(std::string_view(name).substr(5, underscore - 5))) {
      indexes.insert(*index);
    }
  }
  return indexes;
}

std::string attribute_text(const ReadFile& read, const fs::path& file) {
  const auto text = read(file.string());
  return text ? trimmed(*text) : std::string();
}

// One meter's attribute set: <folder>/power<i>_{average,input,oem_info,label}.
std::optional<GracePowerSensor> read_meter(const fs::path& folder, unsigned long long index,
                                           const std::string& hwmon, const ReadFile& read,
                                           std::vector<std::string>& notes) {
  const std::string stem = "power" + std::to_string(index);
  std::string label = attribute_text(read, folder / (stem + "_oem_info"));
  if (label.empty()) label = attribute_text(read, folder / (stem + "_label"));
  const auto parsed = parse_label(label);
  if (!parsed) {
    notes.push_back(hwmon + " " + stem + (label.empty() ? " (no label)" : " (\"" + label + "\")") +
                    " is not a Grace power meter; left out");
    return std::nullopt;
  }
  GracePowerSensor sensor;
  sensor.hwmon = hwmon;
  sensor.label = label;
  sensor.kind = parsed->kind;
  sensor.socket = parsed->socket;
  std::error_code error;
  sensor.averaged = fs::exists(folder / (stem + "_average"), error);
  sensor.power_file = folder / (stem + (sensor.averaged ? "_average" : "_input"));
  if (const auto interval = read((folder / (stem + "_average_interval")).string())) {
    sensor.average_interval_ms = attribute_number(*interval);
  }
  sensor.includes_gpu = sensor.kind == GraceSensorKind::Module;
  return sensor;
}

// hwmon folders in number order (hwmon2 before hwmon10).
std::vector<std::pair<unsigned long long, fs::path>> hwmon_folders(const fs::path& hwmon) {
  std::vector<std::pair<unsigned long long, fs::path>> folders;
  std::error_code error;
  for (fs::directory_iterator it(hwmon, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, 5, "hwmon") != 0) continue;
    if (const auto number = util::parse_unsigned(std::string_view(name).substr(5))) {
      folders.emplace_back(*number, it->path());
    }
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

// Which present sensor contains each: cpu and sysio the same socket's grace, grace its module.
void settle_containment(std::vector<GracePowerSensor>& sensors) {
  std::set<std::pair<GraceSensorKind, unsigned>> present;
  for (const auto& sensor : sensors) present.emplace(sensor.kind, sensor.socket);
  for (auto& sensor : sensors) {
    const bool rail = sensor.kind == GraceSensorKind::Cpu || sensor.kind == GraceSensorKind::Sysio;
    if (rail) sensor.part_of = GraceSensorKind::Grace;
    if (sensor.kind == GraceSensorKind::Grace &&
        present.count({GraceSensorKind::Module, sensor.socket}) != 0) {
      sensor.part_of = GraceSensorKind::Module;
    }
  }
}

}  // namespace

const char* grace_sensor_name(GraceSensorKind kind) {
  switch (kind) {
    case GraceSensorKind::Module:
      return "module";
    case GraceSensorKind::Grace:
      return "grace";
    case GraceSensorKind::Cpu:
      return "cpu";
    case GraceSensorKind::Sysio:
      break;
  }
  return "sysio";
}

GraceDiscovery discover_grace_hwmon(const fs::path& sysfs_root, const ReadFile& read) {
  GraceDiscovery found;
  std::set<std::string> labels;
  for (const auto& [number, folder] : hwmon_folders(sysfs_root / "class" / "hwmon")) {
    const std::string hwmon = folder.filename().string();
    std::set<unsigned long long> seen;
    for (const fs::path& place : {folder, folder / "device"}) {
      for (const auto index : power_indexes(place)) {
        if (!seen.insert(index).second) continue;  // the same meter in hwmonN/ and device/
        auto sensor = read_meter(place, index, hwmon, read, found.notes);
        if (!sensor) continue;
        if (!labels.insert(sensor->label).second) {
          found.notes.push_back(hwmon + " repeats \"" + sensor->label + "\"; left out");
          continue;
        }
        found.sensors.push_back(std::move(*sensor));
      }
    }
  }
  settle_containment(found.sensors);
  return found;
}

GracePowerReader::GracePowerReader(std::vector<GracePowerSensor> sensors, ReadFile read)
    : sensors_(std::move(sensors)),
      gone_(sensors_.size(), 0),
      failing_(sensors_.size(), 0),
      read_(std::move(read)) {}

std::vector<DomainProblem> GracePowerReader::take_problems() {
  return std::exchange(problems_, {});
}

void GracePowerReader::read(std::vector<PowerSample>& out) {
  out.clear();
  for (std::size_t i = 0; i < sensors_.size(); ++i) {
    if (gone_[i] != 0) continue;
    const auto text = read_(sensors_[i].power_file.string());
    const std::int64_t mono = mono_now_ns();
    const std::int64_t wall = wall_now_ns();
    const auto value = text ? attribute_number(*text) : std::nullopt;
    if (value) {
      failing_[i] = 0;
      out.push_back({i, mono, wall, *value});
      continue;
    }
    const int error = text ? 0 : text.error().error;
    const bool vanished = error == ENOENT || error == ENODEV || error == ENXIO;
    if (vanished) gone_[i] = 1;
    if (!vanished && failing_[i] != 0) continue;
    failing_[i] = 1;
    const std::string why =
        text ? "not a number: \"" + trimmed(*text).substr(0, 40) + "\"" : text.error().reason;
    problems_.push_back(
        {i,
         vanished ? ProblemKind::Vanished
                  : (text ? ProblemKind::Malformed : ProblemKind::Unreadable),
         "cannot read the Grace power meter \"" + sensors_[i].label + "\" (" +
             sensors_[i].power_file.string() + ": " + why + ")" +
             (vanished ? "; it is not read again" : "; its samples are missing until it reads")});
  }
}

}  // namespace gpuscope::node
