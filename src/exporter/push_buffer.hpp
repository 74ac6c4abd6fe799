// Batches waiting to be pushed, oldest first: in memory up to a limit, then spilled to files
// (oldest first, so the spilled ones are always a prefix of the queue), then, past a disk limit,
// the oldest are dropped and counted. Used by one thread (the pusher's); not thread-safe.
//
// Sizing: 8 GPUs × ~35 series × 10 samples/s × ~140 bytes ≈ 0.4 MB/s of text, so a 60 s outage
// at 100 ms sampling is ~24 MB: it spills past the default 16 MiB of memory and stays far below
// the default 1 GiB on disk (over 40 minutes at that rate). At 1 s sampling it stays in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::util {
class TemporaryFolder;
}

namespace gpuscope::exporter {

struct PushBufferOptions {
  std::size_t memory_limit_bytes = 16u << 20;
  std::uint64_t disk_limit_bytes = 1ull << 30;
  // Where spill files go; created when first needed, removed by the destructor once empty.
  // Default: a private util::TemporaryFolder, gpuscope-push-XXXXXX under $TMPDIR or /tmp,
  // removed with its spill files however the process ends but kill -9; it stays only when it
  // holds the samples save_remaining() wrote.
  std::filesystem::path spill_dir;
};

struct PushBufferStats {
  std::size_t batches = 0;
  std::uint64_t lines = 0;  // lines (samples) waiting
  std::size_t memory_bytes = 0;
  std::uint64_t disk_bytes = 0;
  std::uint64_t dropped_lines = 0;  // lost because even the disk limit was reached
  std::uint64_t spilled_batches = 0;
};

class PushBuffer {
 public:
  // `warn` receives one line for each problem (spill directory not writable, data dropped).
  PushBuffer(PushBufferOptions options, std::function<void(const std::string&)> warn);
  ~PushBuffer();
  PushBuffer(const PushBuffer&) = delete;
  PushBuffer& operator=(const PushBuffer&) = delete;

  // Appends a batch of `lines` samples (text lines); may spill or drop older batches.
  void add(std::string body, std::uint64_t lines);
  bool empty() const { return queue_.empty(); }
  // The oldest batch's text (read back from its file when spilled); nullopt when empty or when
  // a spilled file can no longer be read (it is then dropped and counted).
  std::optional<std::string> front();
  std::uint64_t front_lines() const { return queue_.empty() ? 0 : queue_.front().lines; }
  // Removes the oldest batch (deleting its file).
  void pop();
  // Writes every batch still waiting, oldest first, into one file in the spill directory
  // (undelivered-<stamp>.prom: Prometheus text with timestamps, as VictoriaMetrics imports it)
  // and empties the buffer. Returns the file, or nullopt when there was nothing to save or it
  // could not be written (then the buffer is left as it was, and `warn` has said why).
  std::optional<std::filesystem::path> save_remaining(std::string_view stamp);
  const PushBufferStats& stats() const { return stats_; }

 private:
  struct Batch {
    std::string body;  // empty when spilled
    std::filesystem::path file;
    std::uint64_t bytes = 0;
    std::uint64_t lines = 0;
  };
  void enforce_limits();
  bool spill(Batch& batch);
  bool ensure_spill_dir();
  void drop_front();

  PushBufferOptions options_;
  std::function<void(const std::string&)> warn_;
  std::deque<Batch> queue_;
  std::size_t first_in_memory_ = 0;  // queue_[0, first_in_memory_) are on disk
  std::uint64_t next_file_ = 0;
  std::unique_ptr<util::TemporaryFolder> spill_folder_;  // the default spill directory, once made
  bool spill_dir_created_ = false;
  bool spill_failed_ = false;
  bool warned_drop_ = false;
  PushBufferStats stats_;
};

}  // namespace gpuscope::exporter
