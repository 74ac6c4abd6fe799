// What the sampler asks of one device's reader, whichever library answers: NVML for an NVIDIA GPU
// or a MIG device (collect/device_reader.hpp), AMD SMI or ROCm SMI for an AMD GPU
// (collect/amd_reader.hpp). Each reader probes its calls once and reads only those that answer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/run.hpp"

namespace gpuscope::collect {

class HealthReader;  // collect/health_reader.hpp

// What happened while reading one sample.
struct ReadOutcome {
  bool lost = false;          // the GPU fell off the bus (GPU_IS_LOST) during this read
  unsigned failed_calls = 0;  // calls that failed transiently (values left absent)
  std::optional<std::string> source_event;  // the saturation source changed state (DCGM)
  // MIG changed (docs/mig.md): a MIG device is gone, MIG mode changed, an instance appeared.
  std::vector<std::string> mig_events;
  // A counter of the GPU went back (an AMD GPU's energy accumulator after a reset): said once.
  std::optional<std::string> counter_event;
};

class GpuReader {
 public:
  virtual ~GpuReader() = default;
  // The device's index in the run (core/mig.hpp for MIG devices; docs/amd.md for AMD GPUs).
  virtual unsigned index() const = 0;
  // The GPU fell off the bus: nothing more is read from it.
  virtual bool lost() const = 0;
  // A MIG device's reader: no power cadence, no health (they are its parent's).
  virtual bool is_mig() const { return false; }
  // The physical GPU it reads (a MIG device's: its parent's index): the readers of one GPU share
  // a sampling thread, so that the GPU's slow calls delay no other GPU (collect/sampler.hpp).
  virtual unsigned gpu() const { return index(); }
  // Reads every supported metric into `row` (which the caller has reset); the energy counter only
  // when `counter` (it is slow on real drivers: SamplerOptions::counter_interval).
  virtual ReadOutcome read(SampleRow& row, std::int64_t mono_ns, bool counter) = 0;
  // The fast cadence: power, and the energy counter when `counter` (it is slow on real drivers:
  // SamplerOptions::counter_interval). Safe to call from another thread concurrently with read().
  virtual ReadOutcome read_power(PowerRow& row, bool counter) = 0;
  // The reader of the GPU's health counters, which the health thread reads (collect/health_watch
  // .hpp); nullptr for a GPU whose health is not read (an AMD GPU's, docs/amd.md).
  // (Defined in collect/health_reader.cpp, where HealthReader is complete.)
  virtual std::unique_ptr<HealthReader> health_reader() const;
};

using GpuReaders = std::vector<std::unique_ptr<GpuReader>>;

}  // namespace gpuscope::collect
