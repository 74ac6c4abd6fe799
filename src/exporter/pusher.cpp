#include "exporter/pusher.hpp"

#include <fmt/format.h>

#include <ctime>
#include <random>

namespace gpuscope::exporter {

using Clock = std::chrono::steady_clock;

Pusher::Pusher(std::unique_ptr<PushTransport> transport, const Exposition& exposition,
               PusherOptions options, Log log)
    : transport_(std::move(transport)),
      exposition_(exposition),
      options_(std::move(options)),
      log_(std::move(log)),
      buffer_(options_.buffer, log_) {}

Pusher::~Pusher() {
  {
    std::lock_guard lock(state_mutex_);
    running_ = false;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Pusher::follow_workload(std::function<std::uint64_t()> looks,
                             std::function<std::map<unsigned, LabelList>()> labels) {
  std::lock_guard lock(open_mutex_);
  workload_looks_ = std::move(looks);
  workload_labels_ = std::move(labels);
  workload_seen_ = 0;
}

void Pusher::refresh_workload() {
  if (!workload_looks_) return;
  const std::uint64_t looks = workload_looks_();
  if (looks == workload_seen_) return;
  workload_seen_ = looks;
  exposition_.set_workload(workload_labels_());
}

void Pusher::on_sample(const SampleRow& row) {
  std::lock_guard lock(open_mutex_);
  refresh_workload();
  open_lines_ += exposition_.append_lines(row, open_);
}

void Pusher::on_power(const PowerRow& row) {
  std::lock_guard lock(open_mutex_);
  refresh_workload();
  open_lines_ += exposition_.append_lines(row, open_);
}

void Pusher::on_health(const HealthRow& row) {
  std::lock_guard lock(open_mutex_);
  refresh_workload();
  open_lines_ += exposition_.append_lines(row, open_);
}

void Pusher::start() {
  std::lock_guard lock(state_mutex_);
  if (running_) return;
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void Pusher::seal() {
  std::string body;
  std::uint64_t lines = 0;
  {
    std::lock_guard lock(open_mutex_);
    body.swap(open_);
    lines = open_lines_;
    open_lines_ = 0;
    open_.reserve(body.size());
  }
  // Batches no bigger than batch_max_bytes, split at line ends.
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t end = body.size();
    if (end - start > options_.batch_max_bytes) {
      end = body.rfind('\n', start + options_.batch_max_bytes);
      end = (end == std::string::npos || end < start) ? body.size() : end + 1;
    }
    std::string part = body.substr(start, end - start);
    std::uint64_t part_lines = 0;
    for (char c : part) part_lines += c == '\n' ? 1 : 0;
    if (end == body.size() && start == 0) part_lines = lines;
    buffer_.add(std::move(part), part_lines);
    start = end;
  }
}

bool Pusher::send_pending() {
  while (!buffer_.empty()) {
    const std::uint64_t lines = buffer_.front_lines();
    std::optional<std::string> body = buffer_.front();
    if (!body) break;
    const PushResult result = transport_->post(*body);
    if (result.outcome == PushResult::Outcome::Delivered) {
      buffer_.pop();
      {
        std::lock_guard lock(state_mutex_);
        summary_.lines_sent += lines;
      }
      if (failing_) {
        log_(
            fmt::format("push: {} takes samples again; delivering the {} buffered during the "
                        "outage",
                        transport_->destination(), lines + buffer_.stats().lines));
        failing_ = false;
      }
      backoff_ = std::chrono::milliseconds(0);
      continue;
    }
    if (result.outcome == PushResult::Outcome::Rejected) {
      log_(fmt::format("push: {} rejected a batch of {} samples ({}); dropping it",
                       transport_->destination(), lines, result.detail));
      buffer_.pop();
      std::lock_guard lock(state_mutex_);
      summary_.lines_dropped += lines;
      continue;
    }
    if (!failing_ || result.detail != last_failure_) {
      log_(fmt::format("push: cannot deliver to {} ({}); buffering samples and retrying",
                       transport_->destination(), result.detail));
      failing_ = true;
      last_failure_ = result.detail;
    }
    backoff_ = backoff_.count() == 0 ? options_.backoff_initial
                                     : std::min(backoff_ * 2, options_.backoff_max);
    // Jitter (±20 %) keeps a fleet of exporters from retrying in lockstep after an outage.
    static thread_local std::minstd_rand random(std::random_device{}());
    const auto jitter = std::uniform_real_distribution<double>(0.8, 1.2)(random);
    next_attempt_ =
        Clock::now() + std::chrono::duration_cast<std::chrono::milliseconds>(backoff_ * jitter);
    return false;
  }
  return true;
}

void Pusher::loop() {
  std::unique_lock lock(state_mutex_);
  auto next_seal = Clock::now() + options_.batch_interval;
  while (running_) {
    wake_.wait_until(lock, next_seal, [this] { return !running_; });
    if (!running_) break;
    next_seal += options_.batch_interval;
    if (next_seal < Clock::now()) next_seal = Clock::now() + options_.batch_interval;
    lock.unlock();
    seal();
    if (Clock::now() >= next_attempt_) send_pending();
    lock.lock();
  }
}

PushSummary Pusher::finish(std::chrono::milliseconds deadline) {
  {
    std::lock_guard lock(state_mutex_);
    running_ = false;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  seal();
  const auto give_up = Clock::now() + deadline;
  while (!buffer_.empty()) {
    if (Clock::now() < next_attempt_) {
      if (next_attempt_ >= give_up) break;
      std::this_thread::sleep_until(next_attempt_);
    }
    if (send_pending()) break;
    if (Clock::now() >= give_up) break;
  }
  if (!buffer_.empty() && options_.save_undelivered) {
    const std::uint64_t lines = buffer_.stats().lines;
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
    if (auto file = buffer_.save_remaining(stamp)) {
      std::lock_guard lock(state_mutex_);
      summary_.saved_file = *file;
      summary_.lines_saved = lines;
    }
  }
  return summary();
}

PushSummary Pusher::summary() const {
  std::lock_guard lock(state_mutex_);
  PushSummary s = summary_;
  s.lines_pending = buffer_.stats().lines;
  s.lines_dropped += buffer_.stats().dropped_lines;
  s.batches_spilled = buffer_.stats().spilled_batches;
  s.destination = transport_->destination();
  return s;
}

}  // namespace gpuscope::exporter
