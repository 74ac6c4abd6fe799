// The node's energy as a run records it (core/node_energy.hpp): the RAPL domains and the Grace
// power meters found once under a sysfs root, numbered together (powercap first), and each read
// turned into one reading per domain with its joules since the first read: a counter's increments
// (wrap-arounds unwrapped by PowercapReader), a meter's power integrated by the trapezoid rule.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/node_energy.hpp"
#include "node/grace_hwmon.hpp"
#include "node/powercap_reader.hpp"

namespace gpuscope::node {

// A problem with one domain, in words, said once (as the readers say them).
struct NodeProblem {
  unsigned domain = 0;  // NodeEnergyDomain::domain
  ProblemKind kind = ProblemKind::Unreadable;
  std::string message;
};

class NodeEnergySampler {
 public:
  // Discovers the domains under `sysfs_root` (throws Error when it is not a folder).
  explicit NodeEnergySampler(const std::filesystem::path& sysfs_root = "/sys",
                             ReadFile read = sysfs_reader());

  const std::vector<NodeEnergyDomain>& domains() const { return domains_; }
  // What discovery found and left out (for -v and logs).
  const std::vector<std::string>& notes() const { return notes_; }

  // Reads every domain still read: one reading per domain that could be read, appended to out.
  void read(std::vector<NodeEnergySample>& out);
  // The problems since the last call, each said once by its reader.
  std::vector<NodeProblem> take_problems();

 private:
  struct Meter {
    std::optional<std::int64_t> last_mono_ns;
    double last_w = 0;
    double joules = 0;
  };

  PowercapReader powercap_;
  GracePowerReader grace_;
  std::vector<NodeEnergyDomain> domains_;
  std::vector<std::string> notes_;
  std::vector<Meter> meters_;
  std::vector<DomainEnergy> energy_scratch_;
  std::vector<PowerSample> power_scratch_;
};

// The node energy domain a powercap zone or a Grace meter is stored as.
NodeEnergyDomain stored_domain(const PowercapDomain& zone, unsigned number);
NodeEnergyDomain stored_domain(const GracePowerSensor& sensor,
                               const std::vector<GracePowerSensor>& all, unsigned number);

}  // namespace gpuscope::node
