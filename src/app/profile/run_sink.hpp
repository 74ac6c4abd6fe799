// Connects the sampler to the run database and to the terminal: every row goes to the writer;
// the latest power per GPU is kept for the progress line; -v prints samples as they come.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "collect/sink.hpp"
#include "store/run_writer.hpp"

namespace gpuscope::app {

class RunSink : public collect::SampleSink {
 public:
  RunSink(store::RunWriter& writer, std::size_t device_count, bool verbose,
          std::int64_t start_mono_ns);

  void on_sample(const SampleRow& row) override;
  void on_power(const PowerRow& row) override;
  void on_event(const Event& event) override;
  void on_health(const HealthRow& row) override;

  // Sum of the latest board power of every GPU, in W (0 before the first sample).
  double total_power_w() const;
  std::int64_t samples() const { return samples_.load(); }

 private:
  store::RunWriter& writer_;
  bool verbose_;
  std::int64_t start_mono_ns_;
  mutable std::mutex mutex_;
  std::vector<double> latest_power_w_;
  std::vector<unsigned> device_slots_;
  std::atomic<std::int64_t> samples_{0};
};

// One line for -v: "  2.300 s GPU 0  power 512.3 W  util 98 %  sm_active 87.1 % ...".
std::string format_sample(const SampleRow& row, std::int64_t start_mono_ns);

}  // namespace gpuscope::app
