// Real Prometheus and VictoriaMetrics servers on loopback for the tsdb tests and benchmark:
// started on free ports into a folder the caller owns, polled until ready (never timed), stopped
// with their objects. VictoriaMetrics is loaded by /api/v1/import/prometheus; Prometheus, which
// cannot be pushed to, starts on blocks that promtool backfilled from OpenMetrics text.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/programs.hpp"

namespace gpuscope::tsdb::testing {

using gpuscope::testing::eventually;
using gpuscope::testing::find_program;

class RealServer {
 public:
  RealServer(std::vector<std::string> argv, int port, std::string log_file);
  ~RealServer();  // SIGTERM, then waits
  RealServer(const RealServer&) = delete;
  RealServer& operator=(const RealServer&) = delete;
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  bool exited();  // the process is gone (e.g. its port was taken)
  std::string log() const;

 private:
  int pid_ = -1;
  int port_ = 0;
  std::string log_file_;
};

// A VictoriaMetrics in `dir` (its data in dir/vm-data), keeping 100 years, with `extra` flags;
// nullptr when victoria-metrics is not installed. Throws std::runtime_error when it does not
// come up.
std::unique_ptr<RealServer> start_victoria_metrics(const std::string& dir,
                                                   const std::vector<std::string>& extra = {});

// Prometheus text (`name{labels} value ms-timestamp` lines) into a VictoriaMetrics, flushed so that
// queries see it. `basic_auth` is user:password or "". Throws std::runtime_error on failure.
void import_into_victoria_metrics(int port, const std::string& text,
                                  const std::string& basic_auth = "");

// OpenMetrics text (ending in "# EOF") backfilled by promtool into blocks in `data_dir`; false
// when promtool is not installed. Throws std::runtime_error when promtool fails.
bool backfill_prometheus(const std::string& openmetrics, const std::string& data_dir,
                         const std::string& scratch_dir);

// A Prometheus on `data_dir` (keeping 100 years, scraping nothing) with `extra` flags; nullptr
// when prometheus is not installed. Throws std::runtime_error when it does not come up.
std::unique_ptr<RealServer> start_prometheus(const std::string& dir, const std::string& data_dir,
                                             const std::vector<std::string>& extra = {});

}  // namespace gpuscope::tsdb::testing
