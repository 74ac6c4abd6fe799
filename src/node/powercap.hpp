// The RAPL energy domains Linux's powercap framework exposes (docs/node-energy.md), found under
// <sysfs root>/class/powercap: every zone named intel-rapl:N or intel-rapl:N:M (Intel, and AMD
// Zen through the same driver) and those of the other RAPL interfaces
// (intel-rapl-mmio:N, intel-rapl-tpmi:N), each with its `name`, `max_energy_range_uj` and the
// path of its `energy_uj`. Discovery reads no counter: the reader does (powercap_reader.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "node/sysfs_file.hpp"

namespace gpuscope::node {

// What a domain measures, from its `name` file (the kernel's RAPL domain names).
enum class DomainKind {
  Package,  // "package-N" (or "package-N-die-M"): the whole socket; includes core and uncore
  Core,     // "core": the cores (PP0); part of its package
  Uncore,   // "uncore": the integrated graphics and other uncore (PP1); part of its package
  Dram,     // "dram": the memory attached to the socket; NOT part of its package
  Psys,     // "psys": the platform (SoC and more); includes the packages, so never added to them
  Other,    // a name this version does not know; read, never added to a total
};

// "package", "core", "uncore", "dram", "psys", "other".
const char* domain_kind_name(DomainKind kind);

struct PowercapDomain {
  std::string zone;       // the zone's folder under class/powercap: "intel-rapl:0:1"
  std::string interface;  // the control type before the colon: "intel-rapl", "intel-rapl-mmio"
  std::string name;       // its `name` file: "package-0", "dram", "core"
  DomainKind kind = DomainKind::Other;
  std::optional<unsigned> socket;     // N of the zone's package-N, or of its parent's
  std::optional<std::string> parent;  // the zone above it ("intel-rapl:0"); none at top level
  // Where the counter wraps to 0, in µJ; nullopt when the file is missing or not a number (a
  // counter that falls then cannot be unwrapped: the reader says so).
  std::optional<std::uint64_t> max_energy_range_uj;
  std::filesystem::path energy_file;  // <zone>/energy_uj
  // Whether the node's CPU-and-memory total adds this domain: packages and DRAM only (core and
  // uncore are inside their package, psys contains the packages).
  bool additive = false;
};

struct PowercapDiscovery {
  std::vector<PowercapDomain> domains;  // sorted by zone: packages before their subzones
  // What was found and left out, one line each (a duplicate MMIO package, a zone without a
  // name), and "no powercap" when the folder is absent. For logs, never an error.
  std::vector<std::string> notes;
};

// The domains under <sysfs_root>/class/powercap. Absent folder: no domains and a note (this
// node has no RAPL, or the module is not loaded). Throws Error when sysfs_root itself is not a
// folder (a wrong --sysfs-root). Duplicate package zones of a second interface (intel-rapl-mmio
// and intel-rapl-tpmi mirroring the MSR interface's package-N) are left out with a note: they
// read the same counter through another path and would count the package twice.
PowercapDiscovery discover_powercap(const std::filesystem::path& sysfs_root = "/sys",
                                    const ReadFile& read = sysfs_reader());

}  // namespace gpuscope::node
