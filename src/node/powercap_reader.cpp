#include "node/powercap_reader.hpp"

#include <cerrno>
#include <utility>

#include "core/clock.hpp"

namespace gpuscope::node {

namespace {

std::string label(const PowercapDomain& domain) {
  return domain.name + " (" + domain.energy_file.string() + ")";
}

}  // namespace

std::string permission_message(const PowercapDomain& domain) {
  return "cannot read the CPU and memory energy counters: " + domain.energy_file.string() +
         " is readable by root only (since the Platypus fix, CVE-2020-8694: Linux 5.10 and "
         "the stable kernels it went back to), so CPU and DRAM energy stay out of this run; run "
         "gpuscope as root, "
         "or have the site grant read access to the powercap energy_uj files (a udev rule "
         "giving a group read permission, docs/node-energy.md)";
}

PowercapReader::PowercapReader(std::vector<PowercapDomain> domains, ReadFile read)
    : domains_(std::move(domains)), tracks_(domains_.size()), read_(std::move(read)) {}

bool PowercapReader::active(std::size_t domain) const {
  const State state = tracks_.at(domain).state;
  return state != State::Denied && state != State::Gone;
}

std::vector<DomainProblem> PowercapReader::take_problems() {
  return std::exchange(problems_, {});
}

std::vector<DomainEnergy> PowercapReader::read() {
  std::vector<DomainEnergy> out;
  read(out);
  return out;
}

void PowercapReader::read(std::vector<DomainEnergy>& out) {
  out.clear();
  for (std::size_t i = 0; i < domains_.size(); ++i) {
    if (!active(i)) continue;
    DomainEnergy reading;
    if (read_one(i, reading)) out.push_back(reading);
  }
}

bool PowercapReader::read_one(std::size_t index, DomainEnergy& reading) {
  const auto text = read_(domains_[index].energy_file.string());
  const std::int64_t mono = mono_now_ns();
  const std::int64_t wall = wall_now_ns();
  if (!text) {
    fail(index, text.error().error, text.error().reason);
    return false;
  }
  const auto counter = attribute_number(*text);
  if (!counter) {
    fail(index, 0, "not a number: \"" + trimmed(*text).substr(0, 40) + "\"");
    return false;
  }
  if (above_range(index, *counter)) return false;
  advance(index, *counter);
  const Track& track = tracks_[index];
  reading = DomainEnergy{index,      mono,           wall,
                         *counter,   track.total_uj, static_cast<double>(track.total_uj) / 1e6,
                         track.wraps};
  return true;
}

void PowercapReader::advance(std::size_t index, std::uint64_t counter) {
  Track& track = tracks_[index];
  const auto& range = domains_[index].max_energy_range_uj;
  if (track.state == State::Live) {
    if (counter >= track.last_uj) {
      track.total_uj += counter - track.last_uj;
    } else if (range && *range >= track.last_uj) {
      track.total_uj += (*range - track.last_uj) + counter;
      ++track.wraps;
    } else if (!track.said_no_range) {
      track.said_no_range = true;
      problems_.push_back({index, ProblemKind::FellWithoutRange,
                           "the energy counter of " + label(domains_[index]) + " fell from " +
                               std::to_string(track.last_uj) + " to " + std::to_string(counter) +
                               " µJ and its max_energy_range_uj is unknown, so that interval's "
                               "energy is left out"});
    }
  }
  track.state = State::Live;
  track.last_uj = counter;
  track.failing = false;
}

// A counter past the value where it wraps is not a reading of it (a driver or firmware fault,
// or a file that is not the counter): adding it would count up to 18 EJ in one interval. That
// read gives no reading and the previous good one stays the base, as for a read that failed.
bool PowercapReader::above_range(std::size_t index, std::uint64_t counter) {
  const auto& range = domains_[index].max_energy_range_uj;
  if (!range || counter <= *range) return false;
  Track& track = tracks_[index];
  if (track.failing) return true;
  track.failing = true;
  problems_.push_back({index, ProblemKind::AboveRange,
                       "the energy counter of " + label(domains_[index]) + " read " +
                           std::to_string(counter) + " µJ, above its max_energy_range_uj of " +
                           std::to_string(*range) +
                           " µJ, which it cannot hold; that reading is left out, not added as "
                           "energy, until the counter reads within its range again"});
  return true;
}

void PowercapReader::fail(std::size_t index, int error, const std::string& reason) {
  Track& track = tracks_[index];
  const PowercapDomain& domain = domains_[index];
  if (error == EACCES || error == EPERM) {
    track.state = State::Denied;
    if (said_denied_) return;
    said_denied_ = true;
    problems_.push_back({index, ProblemKind::PermissionDenied, permission_message(domain)});
    return;
  }
  if (error == ENOENT || error == ENODEV || error == ENXIO) {
    track.state = State::Gone;
    problems_.push_back({index, ProblemKind::Vanished,
                         "the RAPL domain " + label(domain) + " is gone (" + reason +
                             "); its energy stops at its last reading"});
    return;
  }
  if (track.failing) return;
  track.failing = true;
  const ProblemKind kind = error == 0 ? ProblemKind::Malformed : ProblemKind::Unreadable;
  problems_.push_back({index, kind,
                       "cannot read the RAPL domain " + label(domain) + " (" + reason +
                           "); its readings are missing until it reads again"});
}

}  // namespace gpuscope::node
