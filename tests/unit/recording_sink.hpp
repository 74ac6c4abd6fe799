// A SampleSink that keeps everything the sampler hands it, for tests to inspect afterwards.
#pragma once

#include <mutex>
#include <vector>

#include "collect/sink.hpp"

namespace gpuscope::testing {

class RecordingSink : public collect::SampleSink {
 public:
  void on_sample(const SampleRow& row) override {
    std::lock_guard lock(mutex_);
    samples.push_back(row);
  }
  void on_power(const PowerRow& row) override {
    std::lock_guard lock(mutex_);
    power.push_back(row);
  }
  void on_event(const Event& event) override {
    std::lock_guard lock(mutex_);
    events.push_back(event);
  }
  void on_health(const HealthRow& row) override {
    std::lock_guard lock(mutex_);
    health.push_back(row);
  }
  // The rows of one device so far; safe while the sampler runs.
  std::size_t samples_of(unsigned device) {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& row : samples) n += row.device_index == device ? 1 : 0;
    return n;
  }
  std::vector<SampleRow> samples;
  std::vector<PowerRow> power;
  std::vector<Event> events;
  std::vector<HealthRow> health;

 private:
  std::mutex mutex_;
};

}  // namespace gpuscope::testing
