#include "store/run_writer.hpp"

#include <fmt/format.h>

#include <ctime>
#include <utility>

#include "core/error.hpp"
#include "store/row_inserter.hpp"
#include "store/run_file.hpp"
#include "store/run_rows.hpp"
#include "store/sqlite_errors.hpp"

namespace gpuscope::store {
namespace {

std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string plural(std::int64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "1234 samples, 3 power samples and 1 event".
std::string describe_rows(const RowCounts& rows) {
  std::vector<std::string> parts;
  if (rows.samples > 0) parts.push_back(plural(rows.samples, "sample", "samples"));
  if (rows.power_samples > 0) {
    parts.push_back(plural(rows.power_samples, "power sample", "power samples"));
  }
  if (rows.events > 0) parts.push_back(plural(rows.events, "event", "events"));
  if (rows.output_lines > 0) {
    parts.push_back(plural(rows.output_lines, "output line", "output lines"));
  }
  if (rows.process_rows > 0) {
    parts.push_back(plural(rows.process_rows, "process row", "process rows"));
  }
  if (rows.phases > 0) parts.push_back(plural(rows.phases, "phase", "phases"));
  if (rows.health_samples > 0) {
    parts.push_back(plural(rows.health_samples, "health sample", "health samples"));
  }
  if (rows.node_rows > 0)
    parts.push_back(plural(rows.node_rows, "node energy row", "node energy rows"));
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

}  // namespace

std::unique_ptr<RunWriter> RunWriter::create(const std::filesystem::path& path, bool overwrite,
                                             const RunInfo& run,
                                             const std::vector<DeviceDescription>& devices,
                                             const WriterOptions& options) {
  CreatedRun created = create_run_file(path, overwrite, run, devices);
  if (options.scratch) {
    translate_sqlite_errors("cannot write " + path.string(), "check the disk", [&] {
      created.db->exec("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF;");
    });
  }
  return std::unique_ptr<RunWriter>(
      new RunWriter(std::move(created.db), created.run_id, path, options));
}

RunWriter::RunWriter(std::unique_ptr<Database> db, std::int64_t run_id, std::filesystem::path path,
                     const WriterOptions& options)
    : db_(std::move(db)),
      inserter_(std::make_unique<RowInserter>(*db_)),
      run_id_(run_id),
      path_(std::move(path)),
      options_(options) {
  thread_ = std::thread([this] { writer_loop(); });
}

RunWriter::~RunWriter() {
  stop_thread();
}

void RunWriter::push(const SampleRow& row) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.samples.push_back(row);
  } else {
    ++dropped_after_stop_.samples;
  }
}

void RunWriter::push(const PowerRow& row) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.power_samples.push_back(row);
  } else {
    ++dropped_after_stop_.power_samples;
  }
}

void RunWriter::push(Event event) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.events.push_back(std::move(event));
  } else {
    ++dropped_after_stop_.events;
  }
}

void RunWriter::push(OutputLine line) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.output.push_back(std::move(line));
  } else {
    ++dropped_after_stop_.output_lines;
  }
}

void RunWriter::push(GpuProcess process) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.processes.push_back(std::move(process));
  } else {
    ++dropped_after_stop_.process_rows;
  }
}

void RunWriter::push(const ProcessSample& sample) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.process_samples.push_back(sample);
  } else {
    ++dropped_after_stop_.process_rows;
  }
}

void RunWriter::push(Phase phase) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.phases.push_back(std::move(phase));
  } else {
    ++dropped_after_stop_.phases;
  }
}

void RunWriter::push(const HealthRow& row) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.health.push_back(row);
  } else {
    ++dropped_after_stop_.health_samples;
  }
}

void RunWriter::push(NodeEnergyDomain domain) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.node_domains.push_back(std::move(domain));
  } else {
    ++dropped_after_stop_.node_rows;
  }
}

void RunWriter::push(const NodeEnergySample& sample) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.node_samples.push_back(sample);
  } else {
    ++dropped_after_stop_.node_rows;
  }
}

void RunWriter::push(NodeCpuTime time) {
  std::lock_guard lock(mutex_);
  if (accepting()) {
    front_.node_cpu_times.push_back(std::move(time));
  } else {
    ++dropped_after_stop_.node_rows;
  }
}

void RunWriter::flush() {
  std::unique_lock lock(mutex_);
  if (thread_done_) return;
  const std::uint64_t ticket = ++flush_requested_;
  wake_.notify_one();
  flushed_.wait(lock, [&] { return flush_completed_ >= ticket || thread_done_; });
}

void RunWriter::flush_behind() {
  std::unique_lock lock(mutex_);
  if (thread_done_) return;
  const std::uint64_t previous = flush_requested_++;
  wake_.notify_one();
  flushed_.wait(lock, [&] { return flush_completed_ >= previous || thread_done_; });
}

WriterStats RunWriter::stats() const {
  std::lock_guard lock(mutex_);
  WriterStats out = published_;
  out.dropped += dropped_after_stop_;
  out.rows_dropped = out.dropped.total();
  return out;
}

void RunWriter::writer_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, options_.flush_interval,
                   [this] { return stopping_ || flush_requested_ != flush_completed_; });
    const std::uint64_t request = flush_requested_;
    const bool stop = stopping_;
    // The only work under the lock: hand the producers an empty buffer that has capacity.
    std::swap(front_, incoming_);
    lock.unlock();

    write_cycle();

    lock.lock();
    published_ = stats_;
    published_.rows_pending = pending_.counts().total();
    flush_completed_ = request;
    if (stop) thread_done_ = true;
    flushed_.notify_all();
    if (stop) return;
  }
}

void RunWriter::write_cycle() {
  if (pending_.empty()) {
    std::swap(pending_, incoming_);
  } else {
    pending_.append(incoming_);  // retry the older rows first, in order
  }
  if (pending_.empty()) return;
  try {
    inserter_->write(run_id_, pending_);
    stats_.written += pending_.counts();
    stats_.rows_written = stats_.written.total();
    ++stats_.flushes;
    pending_.clear();
    failing_ = false;
  } catch (const SqliteError& e) {
    record_failure(e.what());
  }
}

void RunWriter::record_failure(const std::string& error) {
  ++stats_.failed_flushes;
  stats_.last_error = error;
  if (!failing_) {
    // Said once per outage, and stored with the rows so the database tells its own story.
    failing_ = true;
    pending_.events.push_back(
        {clock_ns(CLOCK_REALTIME), clock_ns(CLOCK_MONOTONIC), std::nullopt, EventKind::WriteError,
         "writing to the run database failed (" + error + "); rows are kept and retried"});
  }
  stats_.dropped += pending_.drop_oldest(options_.max_pending_bytes);
  stats_.rows_dropped = stats_.dropped.total();
}

void RunWriter::stop_thread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> RunWriter::finish(const RunEnd& end) {
  if (finished_) return {};
  finished_ = true;
  stop_thread();  // its last cycle wrote (or tried to write) everything pushed before this call
  // One more attempt for rows the last cycle could not write, then whatever is left is lost.
  if (!pending_.empty()) write_cycle();
  stats_.dropped += pending_.counts();
  stats_.rows_dropped = stats_.dropped.total();
  pending_.clear();
  {
    std::lock_guard lock(mutex_);
    published_ = stats_;
  }

  std::vector<std::string> problems = storage_problems();
  if (auto error = inserter_->finish(run_id_)) {
    // No sample is lost: readers take the last samples from the rows instead.
    problems.push_back(fmt::format(
        "the columnar copy of the last samples could not be written ({}); analyze reads them "
        "from the samples table, more slowly",
        *error));
  }
  RunEnd recorded = end;
  recorded.problems.insert(recorded.problems.end(), problems.begin(), problems.end());
  try {
    update_run_end(*db_, run_id_, recorded);
  } catch (const SqliteError& e) {
    problems.push_back(fmt::format("the end of the run could not be recorded in {}: {}",
                                   path_.string(), e.what()));
  }
  if (auto problem = close_run_file(*db_, path_)) problems.push_back(*problem);
  inserter_.reset();
  db_.reset();
  return problems;
}

std::vector<std::string> RunWriter::storage_problems() const {
  std::vector<std::string> out;
  if (stats_.dropped.total() > 0) {
    out.push_back(
        fmt::format("{} could not be written: {}", describe_rows(stats_.dropped),
                    stats_.last_error.empty() ? "memory bound reached" : stats_.last_error));
  } else if (stats_.failed_flushes > 0) {
    out.push_back(
        fmt::format("writing to {} failed {} times ({}); every row was written on a later attempt",
                    path_.string(), stats_.failed_flushes, stats_.last_error));
  }
  return out;
}

}  // namespace gpuscope::store
