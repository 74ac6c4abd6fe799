#include "node/node_sampler.hpp"

#include <set>
#include <utility>

namespace gpuscope::node {

namespace {

// "power1" of ".../power1_average".
std::string meter_name(const GracePowerSensor& sensor) {
  const std::string file = sensor.power_file.filename().string();
  return file.substr(0, file.find('_'));
}

}  // namespace

NodeEnergyDomain stored_domain(const PowercapDomain& zone, unsigned number) {
  NodeEnergyDomain out;
  out.domain = number;
  out.source = kNodeSourcePowercap;
  out.zone = zone.zone;
  out.name = zone.name;
  out.kind = domain_kind_name(zone.kind);
  out.socket = zone.socket;
  out.additive = zone.additive;
  out.includes_gpu = false;
  out.max_range_uj = zone.max_energy_range_uj;
  return out;
}

NodeEnergyDomain stored_domain(const GracePowerSensor& sensor,
                               const std::vector<GracePowerSensor>& all, unsigned number) {
  NodeEnergyDomain out;
  out.domain = number;
  out.source = kNodeSourceGraceHwmon;
  out.zone = sensor.hwmon + "/" + meter_name(sensor);
  out.name = sensor.label;
  out.kind = grace_sensor_name(sensor.kind);
  out.socket = sensor.socket;
  out.includes_gpu = sensor.includes_gpu;
  // The node's CPU-and-memory figure on Grace is the Grace socket's (CPU, SoC, LPDDR); its rails
  // only where the socket's own meter is absent. The module includes the GPU: never added.
  bool socket_meter = false;
  for (const auto& other : all) {
    socket_meter |= other.kind == GraceSensorKind::Grace && other.socket == sensor.socket;
  }
  switch (sensor.kind) {
    case GraceSensorKind::Grace:
      out.additive = true;
      break;
    case GraceSensorKind::Cpu:
    case GraceSensorKind::Sysio:
      out.additive = !socket_meter;
      break;
    case GraceSensorKind::Module:
      out.additive = false;
      break;
  }
  return out;
}

NodeEnergySampler::NodeEnergySampler(const std::filesystem::path& sysfs_root, ReadFile read)
    : powercap_({}, read), grace_({}, read) {
  PowercapDiscovery zones = discover_powercap(sysfs_root, read);
  GraceDiscovery meters = discover_grace_hwmon(sysfs_root, read);
  notes_ = std::move(zones.notes);
  notes_.insert(notes_.end(), meters.notes.begin(), meters.notes.end());
  unsigned number = 0;
  for (const auto& zone : zones.domains) domains_.push_back(stored_domain(zone, number++));
  for (const auto& sensor : meters.sensors) {
    domains_.push_back(stored_domain(sensor, meters.sensors, number++));
  }
  meters_.resize(meters.sensors.size());
  powercap_ = PowercapReader(std::move(zones.domains), read);
  grace_ = GracePowerReader(std::move(meters.sensors), std::move(read));
}

void NodeEnergySampler::read(std::vector<NodeEnergySample>& out) {
  powercap_.read(energy_scratch_);
  for (const auto& e : energy_scratch_) {
    out.push_back({static_cast<unsigned>(e.domain), e.wall_ns, e.mono_ns, e.joules, std::nullopt});
  }
  grace_.read(power_scratch_);
  const auto first_meter = static_cast<unsigned>(powercap_.domains().size());
  for (const auto& p : power_scratch_) {
    Meter& meter = meters_[p.sensor];
    const double watts = static_cast<double>(p.microwatts) / 1e6;
    if (meter.last_mono_ns && p.mono_ns > *meter.last_mono_ns) {
      // A missed read between two good ones is bridged: the meter's average ran on.
      const double seconds = static_cast<double>(p.mono_ns - *meter.last_mono_ns) / 1e9;
      meter.joules += 0.5 * (meter.last_w + watts) * seconds;
    }
    meter.last_mono_ns = p.mono_ns;
    meter.last_w = watts;
    out.push_back(
        {first_meter + static_cast<unsigned>(p.sensor), p.wall_ns, p.mono_ns, meter.joules, watts});
  }
}

std::vector<NodeProblem> NodeEnergySampler::take_problems() {
  std::vector<NodeProblem> out;
  for (auto& p : powercap_.take_problems()) {
    out.push_back({static_cast<unsigned>(p.domain), p.kind, std::move(p.message)});
  }
  const auto first_meter = static_cast<unsigned>(powercap_.domains().size());
  for (auto& p : grace_.take_problems()) {
    out.push_back({first_meter + static_cast<unsigned>(p.domain), p.kind, std::move(p.message)});
  }
  return out;
}

}  // namespace gpuscope::node
