#include "store/write_batch.hpp"

#include <algorithm>
#include <iterator>

namespace gpuscope::store {
namespace {

template <typename T>
void move_append(std::vector<T>& to, std::vector<T>& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  from.clear();
}

// Removes ceil(share × size) rows from the front of `rows`; returns how many.
template <typename T>
std::int64_t drop_front(std::vector<T>& rows, double share) {
  auto n = static_cast<std::size_t>(static_cast<double>(rows.size()) * share + 0.999999);
  n = std::min(n, rows.size());
  rows.erase(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n));
  return static_cast<std::int64_t>(n);
}

}  // namespace

RowCounts WriteBatch::counts() const {
  return {
      static_cast<std::int64_t>(samples.size()),
      static_cast<std::int64_t>(power_samples.size()),
      static_cast<std::int64_t>(events.size()),
      static_cast<std::int64_t>(output.size()),
      static_cast<std::int64_t>(processes.size() + process_samples.size()),
      static_cast<std::int64_t>(phases.size()),
      static_cast<std::int64_t>(health.size()),
      static_cast<std::int64_t>(node_domains.size() + node_samples.size() + node_cpu_times.size())};
}

std::size_t WriteBatch::bytes() const {
  return bulk_bytes() + event_bytes();
}

std::size_t WriteBatch::bulk_bytes() const {
  std::size_t total = samples.size() * sizeof(SampleRow) + power_samples.size() * sizeof(PowerRow);
  for (const auto& o : output) total += sizeof(OutputLine) + o.text.capacity();
  total += process_samples.size() * sizeof(ProcessSample);
  total += node_samples.size() * sizeof(NodeEnergySample);
  return total;
}

std::size_t WriteBatch::event_bytes() const {
  std::size_t total = health.size() * sizeof(HealthRow);
  for (const auto& d : node_domains) {
    total += sizeof(NodeEnergyDomain) + d.zone.capacity() + d.name.capacity();
  }
  for (const auto& t : node_cpu_times) total += sizeof(NodeCpuTime) + t.cgroup.value_or("").size();
  for (const auto& e : events) total += sizeof(Event) + e.detail.capacity();
  for (const auto& p : processes) {
    total += sizeof(GpuProcess) + p.command_line.value_or("").capacity() +
             p.cgroup.value_or("").capacity();
  }
  for (const auto& p : phases) {
    total += sizeof(Phase) + p.name.capacity() + p.instance.capacity() + p.domain.capacity();
  }
  return total;
}

void WriteBatch::clear() {
  samples.clear();
  power_samples.clear();
  events.clear();
  output.clear();
  processes.clear();
  process_samples.clear();
  phases.clear();
  health.clear();
  node_domains.clear();
  node_samples.clear();
  node_cpu_times.clear();
}

void WriteBatch::append(WriteBatch& newer) {
  move_append(samples, newer.samples);
  move_append(power_samples, newer.power_samples);
  move_append(events, newer.events);
  move_append(output, newer.output);
  move_append(processes, newer.processes);
  move_append(process_samples, newer.process_samples);
  move_append(phases, newer.phases);
  move_append(health, newer.health);
  move_append(node_domains, newer.node_domains);
  move_append(node_samples, newer.node_samples);
  move_append(node_cpu_times, newer.node_cpu_times);
}

RowCounts WriteBatch::drop_oldest(std::size_t max_bytes) {
  const std::size_t total = bytes();
  if (total <= max_bytes) return {};
  // Events are few and say what happened (including the write failure itself), so the bulk
  // streams give way first, in proportion to their share.
  const std::size_t bulk = bulk_bytes();
  RowCounts dropped;
  if (bulk > 0) {
    const double share =
        std::min(1.0, static_cast<double>(total - max_bytes) / static_cast<double>(bulk));
    dropped.samples = drop_front(samples, share);
    dropped.power_samples = drop_front(power_samples, share);
    dropped.output_lines = drop_front(output, share);
    dropped.process_rows = drop_front(process_samples, share);
    // A node reading is a running total: dropping the oldest loses resolution, not energy.
    dropped.node_rows = drop_front(node_samples, share);
  }
  // Health rows are rare and their counters are running totals: the oldest go first, before
  // any event.
  if (!health.empty() && bytes() > max_bytes) {
    const std::size_t excess = bytes() - max_bytes;
    const std::size_t n =
        std::min(health.size(), (excess + sizeof(HealthRow) - 1) / sizeof(HealthRow));
    health.erase(health.begin(), health.begin() + static_cast<std::ptrdiff_t>(n));
    dropped.health_samples = static_cast<std::int64_t>(n);
  }
  while (!events.empty() && bytes() > max_bytes) {
    events.erase(events.begin());
    ++dropped.events;
  }
  while (!processes.empty() && bytes() > max_bytes) {
    processes.erase(processes.begin());
    ++dropped.process_rows;
  }
  if (!phases.empty() && bytes() > max_bytes) {
    const std::size_t before = phases.size();
    while (!phases.empty() && bytes() > max_bytes) {
      // Half of what is left at a time: bytes() walks every row.
      const std::size_t n = std::max<std::size_t>(1, phases.size() / 2);
      phases.erase(phases.begin(), phases.begin() + static_cast<std::ptrdiff_t>(n));
    }
    dropped.phases = static_cast<std::int64_t>(before - phases.size());
  }
  return dropped;
}

}  // namespace gpuscope::store
