// Hands every row to several sinks in turn (the run database, the live table, the pusher).
#pragma once

#include <vector>

#include "collect/sink.hpp"

namespace gpuscope::exporter {

class TeeSink : public collect::SampleSink {
 public:
  explicit TeeSink(std::vector<collect::SampleSink*> sinks) : sinks_(std::move(sinks)) {}
  void on_sample(const SampleRow& row) override {
    for (auto* sink : sinks_) sink->on_sample(row);
  }
  void on_power(const PowerRow& row) override {
    for (auto* sink : sinks_) sink->on_power(row);
  }
  void on_event(const Event& event) override {
    for (auto* sink : sinks_) sink->on_event(event);
  }
  void on_health(const HealthRow& row) override {
    for (auto* sink : sinks_) sink->on_health(row);
  }

 private:
  std::vector<collect::SampleSink*> sinks_;
};

}  // namespace gpuscope::exporter
