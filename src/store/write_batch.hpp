// The rows waiting to be written, one vector per table. The writer keeps two of these and swaps
// them, so pushing never waits for I/O and, once the vectors have grown, never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/gpu_process.hpp"
#include "core/health.hpp"
#include "core/node_energy.hpp"
#include "core/phase.hpp"
#include "core/run.hpp"

namespace gpuscope::store {

// Rows per table; used for what was written, what was dropped and what is pending.
struct RowCounts {
  std::int64_t samples = 0;
  std::int64_t power_samples = 0;
  std::int64_t events = 0;
  std::int64_t output_lines = 0;
  std::int64_t process_rows = 0;  // processes and process_samples
  std::int64_t phases = 0;
  std::int64_t health_samples = 0;
  std::int64_t node_rows = 0;  // node_energy_domains, node_energy_samples and node_cpu_time

  std::int64_t total() const {
    return samples + power_samples + events + output_lines + process_rows + phases +
           health_samples + node_rows;
  }
  RowCounts& operator+=(const RowCounts& other) {
    samples += other.samples;
    power_samples += other.power_samples;
    events += other.events;
    output_lines += other.output_lines;
    process_rows += other.process_rows;
    phases += other.phases;
    health_samples += other.health_samples;
    node_rows += other.node_rows;
    return *this;
  }
};

struct WriteBatch {
  std::vector<SampleRow> samples;
  std::vector<PowerRow> power_samples;
  std::vector<Event> events;
  std::vector<OutputLine> output;
  std::vector<GpuProcess> processes;
  std::vector<ProcessSample> process_samples;
  std::vector<Phase> phases;
  std::vector<HealthRow> health;
  std::vector<NodeEnergyDomain> node_domains;
  std::vector<NodeEnergySample> node_samples;
  std::vector<NodeCpuTime> node_cpu_times;

  bool empty() const {
    return samples.empty() && power_samples.empty() && events.empty() && output.empty() &&
           processes.empty() && process_samples.empty() && phases.empty() && health.empty() &&
           node_domains.empty() && node_samples.empty() && node_cpu_times.empty();
  }
  RowCounts counts() const;
  // Approximate memory the rows hold, strings included.
  std::size_t bytes() const;
  // Empties the vectors, keeping their capacity.
  void clear();
  // Moves `newer`'s rows after this batch's (each table stays in time order); empties `newer`.
  void append(WriteBatch& newer);
  // Drops the oldest samples, power samples, output lines and process samples, in proportion,
  // until bytes() <= max_bytes (health rows, events, processes and phases only when that is not
  // enough); returns how many were dropped.
  RowCounts drop_oldest(std::size_t max_bytes);

 private:
  std::size_t bulk_bytes() const;   // samples, power samples, output, process and node samples
  std::size_t event_bytes() const;  // health rows, events, processes and phases
};

}  // namespace gpuscope::store
