// What `gpuscope profile` says on stderr while the job runs: a start line, a progress line
// (redrawn in place on a terminal, every minute in a log file), and a summary at the end.
#pragma once

#include <cstdint>
#include <string>

#include "core/run.hpp"

namespace gpuscope::app {

class Progress {
 public:
  Progress(bool quiet, std::int64_t start_mono_ns, std::size_t gpus, std::string output);

  void started();
  // Called about every second by the launcher's wait loop.
  void tick(std::int64_t samples, double total_power_w);
  // Clears the in-place line before anything else is printed.
  void finished();
  // How the job ended and where the data went, plus any problems, always printed.
  void summary(const std::string& exit_text, const RunEnd& end, std::size_t gpus) const;

 private:
  bool quiet_;
  bool terminal_;
  std::int64_t start_mono_ns_;
  std::size_t gpus_;
  std::string output_;
  std::int64_t last_log_ns_ = 0;
  bool drawn_ = false;
};

// "1 h 02 min", "3 min 05 s", "12.3 s".
std::string format_duration(double seconds);

}  // namespace gpuscope::app
