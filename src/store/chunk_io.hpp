// Writing and reading sample_chunks (schema 1.1) on an open connection: the writer's and
// merge's inserts, and the reader's plan for one GPU: chunks for the prefix of its samples they
// cover, rows for the rest (a tail left by kill -9, or a whole 1.0 file).
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/metrics.hpp"
#include "store/sample_chunks.hpp"
#include "store/sqlite.hpp"

namespace gpuscope::store {

// Inserts chunks with one prepared statement; `schema` names the database ("main").
class ChunkInserter {
 public:
  explicit ChunkInserter(Database& db, std::string_view schema = "main");
  void insert(std::int64_t run_id, const EncodedChunk& chunk);

 private:
  Statement insert_;
};

// Counts the GPU's rows and checks its chunks: they are used only when they are ordered, do not
// overlap, and hold as many rows as the samples table has up to their end (so a row the chunks
// lack, e.g. one written after a crash or out of order, sends the reader to the rows).
// `known_rows`: the GPU's row count when the caller has it (samples_per_device), which saves a
// pass over the samples index; a known count the chunks do not account for is checked by
// counting the rows.
SamplePlan plan_samples(Database& db, std::string_view schema, std::int64_t run_id,
                        unsigned device_index, bool chunks_available,
                        std::optional<std::int64_t> known_rows = std::nullopt);

// How many rows each GPU of the run has in the samples table, by device index: the writer's
// counts (sample_counts, schema 1.13) when it left them, else one pass over the index.
std::vector<std::pair<unsigned, std::int64_t>> samples_per_device(Database& db,
                                                                  std::string_view schema,
                                                                  std::int64_t run_id);

// Records each GPU's row count of run `run_id` in main.sample_counts (replacing what was there),
// inside the caller's transaction: the writer when the run ends, and merge.
void record_sample_counts(Database& db, std::int64_t run_id,
                          const std::vector<std::pair<unsigned, std::int64_t>>& counts);

// The stored metrics `schema`'s samples table has columns for: all of them from schema 1.12 on,
// those before the AMD metrics in an older file (read as empty; docs/database.md).
std::bitset<kMetricCount> stored_metric_columns(Database& db, std::string_view schema);

// Reads the planned GPU's samples in mono_ns order (as ORDER BY mono_ns over the rows gives
// them) into `out`, cleared first: the timestamps and the metrics in `wanted` (the others, and
// those the file has no column for, stay empty), NULL as NaN. Falls back to rows when a chunk does
// not decode. Throws SqliteError.
void read_samples(Database& db, std::string_view schema, const SamplePlan& plan,
                  const std::bitset<kMetricCount>& wanted, SampleColumns& out);

// Reads the rows of one GPU with mono_ns > `after_mono_ns` (all of them when `all`) into `out`
// (appending), as read_samples() does.
void read_sample_rows(Database& db, std::string_view schema, std::int64_t run_id,
                      unsigned device_index, bool all, std::int64_t after_mono_ns,
                      const std::bitset<kMetricCount>& wanted, SampleColumns& out);

}  // namespace gpuscope::store
