// Where the sampler's rows go. The CLI connects it to the run database (store/) and to live
// views; collect/ itself knows nothing of them.
#pragma once

#include "core/health.hpp"
#include "core/run.hpp"

namespace gpuscope::collect {

// Called from the sampler's threads, concurrently: implementations must be thread-safe and must
// return quickly (queue, never wait on a disk or a network).
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual void on_sample(const SampleRow& row) = 0;
  virtual void on_power(const PowerRow& row) = 0;
  virtual void on_event(const Event& event) = 0;
  // A GPU's health counters, at the slow health cadence (core/health.hpp).
  virtual void on_health(const HealthRow& row) { (void)row; }
};

}  // namespace gpuscope::collect
