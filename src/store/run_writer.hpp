// Writes one profiled run into a run database while it happens. The sampler pushes rows without
// ever waiting for the disk; a writer thread commits them in one transaction about every flush
// interval (WAL mode), so a kill -9 loses at most about one interval and leaves a readable file.
// Write failures (disk full, I/O errors) never reach the sampler: rows are kept in memory up to
// a bound, retried at the next flush, and what could not be written is reported by finish().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/device_description.hpp"
#include "core/health.hpp"
#include "core/node_energy.hpp"
#include "core/run.hpp"
#include "store/write_batch.hpp"

namespace gpuscope::store {

class Database;
class RowInserter;

struct WriterOptions {
  // How often the writer thread commits: the most a kill -9 can lose.
  std::chrono::milliseconds flush_interval{1000};
  // Memory for rows that could not be written yet; past it the oldest are dropped (and counted).
  std::size_t max_pending_bytes = std::size_t{64} << 20;
  // A file nobody reads while it is written and that is thrown away when the process dies (an
  // import's part in its private temporary folder): no write-ahead log and no syncs (the
  // rollback journal in memory, so a failed write still rolls back). finish() leaves it as
  // complete as any run database.
  bool scratch = false;
};

struct WriterStats {
  RowCounts written;  // rows committed
  RowCounts dropped;  // rows given up on: over the memory bound, or still unwritable at finish
  std::int64_t rows_written = 0;
  std::int64_t rows_dropped = 0;
  std::int64_t rows_pending = 0;  // rows held in memory after a failed flush
  std::int64_t flushes = 0;       // transactions committed
  std::int64_t failed_flushes = 0;
  std::string last_error;  // SQLite's words for the last failure, e.g. "database or disk is full"
};

class RunWriter {
 public:
  // Creates `path` (and its parent directories) holding the schema, the run (status 'running')
  // and its devices, and starts the writer thread. Throws Error::usage when `path` exists and
  // `overwrite` is false, Error when the directory or file cannot be written.
  static std::unique_ptr<RunWriter> create(const std::filesystem::path& path, bool overwrite,
                                           const RunInfo& run,
                                           const std::vector<DeviceDescription>& devices,
                                           const WriterOptions& options = {});

  // Flushes and stops without recording an end: the run stays 'running', which is what a
  // database of an interrupted gpuscope says.
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  // Queue a row for the next flush. Thread-safe, no I/O, never throws for storage problems.
  void push(const SampleRow& row);
  void push(const PowerRow& row);
  void push(Event event);
  void push(OutputLine line);
  void push(GpuProcess process);
  void push(const ProcessSample& sample);
  void push(Phase phase);
  void push(const HealthRow& row);
  // The node's energy (core/node_energy.hpp): its domains once, their readings, CPU times.
  void push(NodeEnergyDomain domain);
  void push(const NodeEnergySample& sample);
  void push(NodeCpuTime time);

  // Writes everything pushed so far now and waits for the attempt (it may fail: see stats()).
  void flush();
  // Asks for everything pushed so far to be written, and returns without waiting for that
  // write, only for the one asked for before it (if still under way). A bulk producer that calls
  // it every N rows keeps working while its rows are written and holds at most about 2N rows
  // (an import's reader on one core, SQLite on the other).
  void flush_behind();

  // Writes the remaining rows and the run's end (with the storage problems appended to
  // end.problems), checkpoints the WAL so the .db file alone is complete, and stops the writer.
  // Returns the storage problems in words ("1234 samples could not be written: database or
  // disk is full"); empty when every row was written. Call once.
  std::vector<std::string> finish(const RunEnd& end);

  // Counters since create(); safe to call from any thread.
  WriterStats stats() const;

  // The run's id in the runs table.
  std::int64_t run_id() const { return run_id_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  RunWriter(std::unique_ptr<Database> db, std::int64_t run_id, std::filesystem::path path,
            const WriterOptions& options);

  void writer_loop();
  // Moves `incoming_` into `pending_` and tries to commit `pending_` (writer thread only).
  void write_cycle();
  void record_failure(const std::string& error);
  void stop_thread();
  std::vector<std::string> storage_problems() const;
  bool accepting() const { return !stopping_; }

  std::unique_ptr<Database> db_;
  std::unique_ptr<RowInserter> inserter_;
  const std::int64_t run_id_;
  const std::filesystem::path path_;
  const WriterOptions options_;

  // Guarded by mutex_: the producers' buffer, requests to the writer thread, the stats copy.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable flushed_;
  WriteBatch front_;
  bool stopping_ = false;
  bool thread_done_ = false;
  std::uint64_t flush_requested_ = 0;
  std::uint64_t flush_completed_ = 0;
  RowCounts dropped_after_stop_;
  WriterStats published_;

  // Writer thread only (and the finishing thread after the join).
  WriteBatch incoming_;
  WriteBatch pending_;
  WriterStats stats_;
  bool failing_ = false;

  bool finished_ = false;
  std::thread thread_;
};

}  // namespace gpuscope::store
