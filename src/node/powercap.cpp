#include "node/powercap.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "core/error.hpp"
#include "util/number_text.hpp"

namespace gpuscope::node {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kRaplPrefix = "intel-rapl";
// The MSR interface: the one every RAPL machine has, and the one kept when another mirrors it.
constexpr std::string_view kMsrInterface = "intel-rapl";

// A zone's folder name split: "intel-rapl:0:1" is interface "intel-rapl", path {0, 1}.
struct ZoneName {
  std::string interface;
  std::vector<unsigned long long> path;
};

std::optional<ZoneName> parse_zone(const std::string& folder) {
  const auto colon = folder.find(':');
  if (colon == std::string::npos || folder.compare(0, kRaplPrefix.size(), kRaplPrefix) != 0) {
    return std::nullopt;  // the control type's own folder ("intel-rapl"), or not RAPL at all
  }
  ZoneName zone{folder.substr(0, colon), {}};
  std::size_t start = colon + 1;
  while (true) {
    const auto end = folder.find(':', start);
    const auto number = util::parse_unsigned(
        std::string_view(folder).substr(start, end == std::string::npos ? end : end - start));
    if (!number) return std::nullopt;
    zone.path.push_back(*number);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return zone;
}

// "package-3" and "package-3-die-1" are socket 3.
std::optional<unsigned> package_socket(const std::string& name) {
  constexpr std::string_view kPackage = "package-";
  if (name.compare(0, kPackage.size(), kPackage) != 0) return std::nullopt;
  const auto rest = std::string_view(name).substr(kPackage.size());
  const auto number = util::parse_unsigned(rest.substr(0, rest.find('-')));
  if (!number || *number > 65535) return std::nullopt;
  return static_cast<unsigned>(*number);
}

DomainKind kind_of(const std::string& name) {
  if (package_socket(name)) return DomainKind::Package;
  if (name == "core") return DomainKind::Core;
  if (name == "uncore") return DomainKind::Uncore;
  if (name == "dram") return DomainKind::Dram;
  if (name == "psys") return DomainKind::Psys;
  return DomainKind::Other;
}

struct Candidate {
  ZoneName parsed;
  PowercapDomain domain;
};

// Zones in tree order: interface, then their numbers, so a parent comes before its subzones.
bool tree_order(const Candidate& a, const Candidate& b) {
  if (a.parsed.interface != b.parsed.interface) return a.parsed.interface < b.parsed.interface;
  return a.parsed.path < b.parsed.path;
}

std::string parent_zone(const ZoneName& zone) {
  std::string text = zone.interface;
  for (std::size_t i = 0; i + 1 < zone.path.size(); ++i) text += ":" + std::to_string(zone.path[i]);
  return text;
}

// The zone read from its folder, or a note saying why it is left out.
std::optional<Candidate> read_zone(const fs::path& folder, ZoneName parsed, const ReadFile& read,
                                   std::vector<std::string>& notes) {
  const std::string zone = folder.filename().string();
  const auto name = read((folder / "name").string());
  if (!name || trimmed(*name).empty()) {
    notes.push_back("powercap zone " + zone + " has no readable name (" +
                    (name ? std::string("empty") : name.error().reason) + "); left out");
    return std::nullopt;
  }
  Candidate candidate{std::move(parsed), {}};
  PowercapDomain& domain = candidate.domain;
  domain.zone = zone;
  domain.interface = candidate.parsed.interface;
  domain.name = trimmed(*name);
  domain.kind = kind_of(domain.name);
  domain.socket = package_socket(domain.name);
  if (candidate.parsed.path.size() > 1) domain.parent = parent_zone(candidate.parsed);
  if (const auto range = read((folder / "max_energy_range_uj").string())) {
    domain.max_energy_range_uj = attribute_number(*range);
  }
  domain.energy_file = folder / "energy_uj";
  return candidate;
}

std::vector<Candidate> list_zones(const fs::path& powercap, const ReadFile& read,
                                  std::vector<std::string>& notes) {
  std::vector<Candidate> zones;
  std::error_code error;
  for (fs::directory_iterator it(powercap, error), end; !error && it != end; it.increment(error)) {
    auto parsed = parse_zone(it->path().filename().string());
    if (!parsed) continue;
    if (auto zone = read_zone(it->path(), std::move(*parsed), read, notes)) {
      zones.push_back(std::move(*zone));
    }
  }
  if (error) notes.push_back("cannot list " + powercap.string() + " (" + error.message() + ")");
  std::sort(zones.begin(), zones.end(), tree_order);
  return zones;
}

// Subzones take their package's socket; a second interface's zone that mirrors one of the MSR
// interface (same socket, same name) is left out, with its subzones.
std::vector<PowercapDomain> settle(std::vector<Candidate> zones, std::vector<std::string>& notes) {
  std::map<std::string, std::optional<unsigned>> socket_of;
  for (auto& zone : zones) {
    auto& domain = zone.domain;
    if (!domain.socket && domain.parent) {
      const auto parent = socket_of.find(*domain.parent);
      if (parent != socket_of.end()) domain.socket = parent->second;
    }
    socket_of[domain.zone] = domain.socket;
  }
  std::set<std::pair<std::optional<unsigned>, std::string>> msr;
  for (const auto& zone : zones) {
    if (zone.domain.interface == kMsrInterface) msr.emplace(zone.domain.socket, zone.domain.name);
  }
  std::vector<PowercapDomain> kept;
  for (auto& zone : zones) {
    auto& domain = zone.domain;
    if (domain.interface != kMsrInterface && msr.count({domain.socket, domain.name}) != 0) {
      notes.push_back("powercap zone " + domain.zone + " (" + domain.name +
                      ") mirrors the MSR interface's; left out so it is not counted twice");
      continue;
    }
    domain.additive = domain.kind == DomainKind::Package || domain.kind == DomainKind::Dram;
    kept.push_back(std::move(domain));
  }
  return kept;
}

}  // namespace

const char* domain_kind_name(DomainKind kind) {
  switch (kind) {
    case DomainKind::Package:
      return "package";
    case DomainKind::Core:
      return "core";
    case DomainKind::Uncore:
      return "uncore";
    case DomainKind::Dram:
      return "dram";
    case DomainKind::Psys:
      return "psys";
    case DomainKind::Other:
      break;
  }
  return "other";
}

PowercapDiscovery discover_powercap(const fs::path& sysfs_root, const ReadFile& read) {
  std::error_code error;
  if (!fs::is_directory(sysfs_root, error)) {
    throw Error("cannot read node energy from " + sysfs_root.string(),
                error ? error.message() : "not a folder",
                "give the folder sysfs is mounted on (normally /sys)");
  }
  PowercapDiscovery found;
  const fs::path powercap = sysfs_root / "class" / "powercap";
  if (!fs::is_directory(powercap, error)) {
    found.notes.push_back("no " + powercap.string() +
                          ": this node exposes no RAPL energy (no powercap driver loaded)");
    return found;
  }
  found.domains = settle(list_zones(powercap, read, found.notes), found.notes);
  if (found.domains.empty()) found.notes.push_back("no RAPL zone under " + powercap.string());
  return found;
}

}  // namespace gpuscope::node
