// Writes a WriteBatch in one transaction with statements prepared once and bound by index: the
// writer thread's hot path. It also keeps sample_chunks, the columnar copy of the samples: rows
// committed by one write() are cut into chunks that are inserted by a later write() (or
// finish()), so every chunk only ever holds committed rows. At the end it records how many rows
// each GPU has (sample_counts), which spares readers a pass over the samples index.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "store/chunk_io.hpp"
#include "store/sample_chunks.hpp"
#include "store/sqlite.hpp"
#include "store/write_batch.hpp"

namespace gpuscope::store {

class RowInserter {
 public:
  // Prepares the INSERTs on `db`, which must outlive the inserter.
  explicit RowInserter(Database& db);

  // Inserts every row of `batch` under `run_id` in one transaction: all rows or, on failure,
  // none (the transaction is rolled back and SqliteError thrown, so the caller can retry).
  void write(std::int64_t run_id, const WriteBatch& batch);

  // At the end of the run, in one transaction: the chunks of the rows not yet in one, and each
  // GPU's count of committed rows. Returns SQLite's words when that fails (the rows are
  // written; readers use them instead, and count them).
  std::optional<std::string> finish(std::int64_t run_id);

 private:
  // Parameters of one samples row: run_id, device_index, wall_ns, mono_ns, the metrics.
  static constexpr std::size_t kSampleParameters = 4 + kStoredMetricCount;

  void write_samples(std::int64_t run_id, const WriteBatch& batch);
  // `nulls`: which of `stmt`'s parameters are NULL now (bindings outlive a step, so a metric
  // absent row after row, as most are in a log, is bound once).
  static void bind_sample(Statement& stmt, std::vector<char>& nulls, int offset,
                          std::int64_t run_id, const SampleRow& row);
  void write_power(std::int64_t run_id, const WriteBatch& batch);
  void write_events(std::int64_t run_id, const WriteBatch& batch);
  void write_output(std::int64_t run_id, const WriteBatch& batch);
  void write_processes(std::int64_t run_id, const WriteBatch& batch);
  void write_phases(std::int64_t run_id, const WriteBatch& batch);
  void write_health(std::int64_t run_id, const WriteBatch& batch);
  void write_node(std::int64_t run_id, const WriteBatch& batch);

  Database& db_;
  Statement begin_;
  Statement commit_;
  Statement insert_sample_;   // one row
  Statement insert_samples_;  // kSamplesPerInsert rows
  Statement insert_power_;
  Statement insert_event_;
  Statement insert_output_;
  Statement insert_process_;
  Statement insert_process_sample_;
  Statement insert_phase_;
  Statement insert_health_;
  Statement insert_node_domain_;
  Statement insert_node_sample_;
  Statement insert_node_cpu_time_;
  std::vector<char> sample_nulls_;   // of insert_sample_
  std::vector<char> samples_nulls_;  // of insert_samples_
  ChunkInserter insert_chunk_;
  ChunkBuilder chunks_;
  std::map<unsigned, std::int64_t> committed_rows_;  // by device index
};

}  // namespace gpuscope::store
