// Reading the RAPL domains found by discover_powercap: each domain's energy_uj counter turned
// into a joule total that only grows, across the counter's wrap-arounds (it falls back to 0
// past max_energy_range_uj), each reading with its time. A domain that cannot be read gives no
// reading (never a zero) and one problem, said once; the reader goes on with the others. A
// counter above its max_energy_range_uj is no energy: that read gives no reading either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "node/powercap.hpp"
#include "node/sysfs_file.hpp"

namespace gpuscope::node {

struct DomainEnergy {
  std::size_t domain = 0;        // index into PowercapReader::domains()
  std::int64_t mono_ns = 0;      // CLOCK_MONOTONIC just after the counter was read
  std::int64_t wall_ns = 0;      // CLOCK_REALTIME, the same moment
  std::uint64_t counter_uj = 0;  // energy_uj as read
  // Energy since this reader first read the domain, in µJ and J: the counter's increments
  // summed, a wrap counted as (max_energy_range_uj - previous) + current.
  std::uint64_t total_uj = 0;
  double joules = 0;
  unsigned wraps = 0;  // wrap-arounds seen so far
};

enum class ProblemKind {
  PermissionDenied,  // EACCES/EPERM on energy_uj: non-root on Linux >= 5.10 (CVE-2020-8694)
  Vanished,          // the zone is gone (ENOENT, ENODEV): not read again
  Unreadable,        // another read error (EIO, ...): said once, read again next time
  Malformed,         // energy_uj is not a number: said once, read again next time
  FellWithoutRange,  // the counter fell but max_energy_range_uj is unknown: interval lost
  AboveRange,        // energy_uj above max_energy_range_uj: impossible, no reading, said per streak
};

struct DomainProblem {
  std::size_t domain = 0;  // index into PowercapReader::domains()
  ProblemKind kind = ProblemKind::Unreadable;
  std::string message;  // one sentence: what, why and, where the user can act, what to do
};

class PowercapReader {
 public:
  explicit PowercapReader(std::vector<PowercapDomain> domains, ReadFile read = sysfs_reader());

  const std::vector<PowercapDomain>& domains() const { return domains_; }

  // Reads every domain still worth reading once, in order; `out` is cleared, then holds one
  // reading per domain read. The first reading of a domain has total 0.
  void read(std::vector<DomainEnergy>& out);
  std::vector<DomainEnergy> read();

  // The problems found since the last call. Each domain says each kind once (an unreadable or
  // malformed streak once, again only after a good read between); permission denials are said
  // once for the whole reader, naming the first domain denied and what to do.
  std::vector<DomainProblem> take_problems();

  // Whether the domain is still read (false once denied or vanished).
  bool active(std::size_t domain) const;

 private:
  enum class State { Fresh, Live, Denied, Gone };
  struct Track {
    State state = State::Fresh;
    std::uint64_t last_uj = 0;
    std::uint64_t total_uj = 0;
    unsigned wraps = 0;
    bool failing = false;  // an unreadable or malformed streak already said
    bool said_no_range = false;
  };

  bool read_one(std::size_t index, DomainEnergy& reading);
  void fail(std::size_t index, int error, const std::string& reason);
  bool above_range(std::size_t index, std::uint64_t counter);
  void advance(std::size_t index, std::uint64_t counter);

  std::vector<PowercapDomain> domains_;
  std::vector<Track> tracks_;
  ReadFile read_;
  std::vector<DomainProblem> problems_;
  bool said_denied_ = false;
};

// The one message for a refused energy_uj (what the EACCES problem says).
std::string permission_message(const PowercapDomain& domain);

}  // namespace gpuscope::node
