// Pushes samples to VictoriaMetrics in batches, on its own thread: the sampler's threads only
// append text lines to the open batch. Failed batches wait in a PushBuffer and are retried with
// exponential backoff, oldest first, so an outage loses nothing the buffer can hold.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "collect/sink.hpp"
#include "exporter/exposition.hpp"
#include "exporter/process_exposition.hpp"
#include "exporter/push_buffer.hpp"

namespace gpuscope::exporter {

struct PushResult {
  enum class Outcome {
    Delivered,  // 2xx
    Retry,      // unreachable, timed out, 5xx, 429, 401/403 (credentials may be fixed), 404
    Rejected,   // the server refused this data (400, 413, 422): retrying cannot help
  };
  Outcome outcome = Outcome::Delivered;
  std::string detail;  // words for people: "connection refused", "HTTP 401: ..."
};

// How a batch travels (libcurl in production, a fake in tests).
class PushTransport {
 public:
  virtual ~PushTransport() = default;
  virtual PushResult post(const std::string& body) = 0;
  virtual std::string destination() const = 0;  // the URL, for messages (holds no secret)
};

struct PusherOptions {
  std::chrono::milliseconds batch_interval{1000};
  std::size_t batch_max_bytes = 1u << 20;
  std::chrono::milliseconds backoff_initial{250};
  std::chrono::milliseconds backoff_max{5000};
  PushBufferOptions buffer;
  // What finish() could not deliver is written to a file in the spill directory (`serve`, whose
  // samples exist nowhere else) instead of being discarded (`profile`: the run database has them).
  bool save_undelivered = false;
};

struct PushSummary {
  std::uint64_t lines_sent = 0;
  std::uint64_t lines_pending = 0;  // not delivered when finish() gave up
  std::uint64_t lines_dropped = 0;  // rejected by the server or dropped by a full buffer
  std::uint64_t batches_spilled = 0;
  std::uint64_t lines_saved = 0;  // not delivered, but saved in saved_file (save_undelivered)
  std::filesystem::path saved_file;
  std::string destination;  // the import URL, to send the saved file to later
};

class Pusher : public collect::SampleSink {
 public:
  using Log = std::function<void(const std::string&)>;
  Pusher(std::unique_ptr<PushTransport> transport, const Exposition& exposition,
         PusherOptions options, Log log);
  ~Pusher() override;
  Pusher(const Pusher&) = delete;
  Pusher& operator=(const Pusher&) = delete;

  void on_sample(const SampleRow& row) override;
  void on_power(const PowerRow& row) override;
  void on_event(const Event&) override {}
  void on_health(const HealthRow& row) override;

  // The GPUs' workload labels (slurm_job_id, pod, namespace, container) as /metrics carries them,
  // refreshed whenever `looks` changes (serve: gpuscope job finds a job's series by them).
  void follow_workload(std::function<std::uint64_t()> looks,
                       std::function<std::map<unsigned, LabelList>()> labels);

  void start();
  // Stops the thread and sends what is left, retrying until `deadline` has passed.
  PushSummary finish(std::chrono::milliseconds deadline);
  // What was sent, dropped and left; complete after finish().
  PushSummary summary() const;

 private:
  void loop();
  void seal();  // moves the open batch into the buffer (pusher thread)
  // Sends buffered batches while the server takes them; false when it failed (backoff set).
  bool send_pending();

  void refresh_workload();  // under open_mutex_

  std::unique_ptr<PushTransport> transport_;
  Exposition exposition_;  // a copy: its workload labels change with the processes
  std::function<std::uint64_t()> workload_looks_;
  std::function<std::map<unsigned, LabelList>()> workload_labels_;
  std::uint64_t workload_seen_ = 0;
  PusherOptions options_;
  Log log_;

  std::mutex open_mutex_;  // guards open_ and open_lines_ (sampler threads and pusher thread)
  std::string open_;
  std::uint64_t open_lines_ = 0;

  PushBuffer buffer_;  // pusher thread only (and finish() after it stopped)
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::milliseconds backoff_{0};
  bool failing_ = false;
  std::string last_failure_;

  mutable std::mutex state_mutex_;
  std::condition_variable wake_;
  bool running_ = false;
  PushSummary summary_;
  std::thread thread_;
};

}  // namespace gpuscope::exporter
