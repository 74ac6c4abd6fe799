#include "store/chunk_io.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>

#include "store/schema.hpp"

namespace gpuscope::store {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// run_id, device_index, first_mono_ns, last_mono_ns, row_count, wall_ns, mono_ns
constexpr int kChunkFirstMetricParameter = 8;

std::string metric_list(const std::bitset<kMetricCount>& wanted) {
  std::string out;
  for (std::size_t m = 0; m < kStoredMetricCount; ++m) {
    if (wanted.test(m)) out += fmt::format(", {}", kMetrics[m].name);
  }
  return out;
}

std::int64_t count_rows(Database& db, std::string_view schema, std::int64_t run_id,
                        unsigned device_index, const std::int64_t* after_mono_ns) {
  Statement stmt = db.prepare(
      fmt::format("SELECT count(*) FROM {}.samples WHERE run_id = ? AND device_index = ?{}", schema,
                  after_mono_ns != nullptr ? " AND mono_ns > ?" : ""));
  stmt.bind(1, run_id);
  stmt.bind(2, std::int64_t{device_index});
  if (after_mono_ns != nullptr) stmt.bind(3, *after_mono_ns);
  stmt.step();
  return stmt.int64(0);
}

// Appends value `v` of row `row` to `column`, which is either full (one value per row so far) or
// empty while every row so far was NULL: a metric the GPU does not have costs no memory.
void put(std::vector<double>& column, std::size_t row, double v) {
  if (std::isnan(v)) {
    if (!column.empty()) column.push_back(v);
    return;
  }
  if (column.size() < row) column.resize(row, kNaN);
  column.push_back(v);
}

// Decodes the chunks of the plan into `out`; false when one is malformed or disagrees with the
// plan (then the caller reads rows instead).
bool read_chunks(Database& db, std::string_view schema, const SamplePlan& plan,
                 const std::bitset<kMetricCount>& wanted, SampleColumns& out) {
  Statement stmt = db.prepare(fmt::format(
      "SELECT first_mono_ns, last_mono_ns, row_count, wall_ns, mono_ns{} FROM {}.sample_chunks "
      "WHERE run_id = ? AND device_index = ? AND first_mono_ns <= ? ORDER BY first_mono_ns",
      metric_list(wanted), schema));
  stmt.bind(1, plan.run_id);
  stmt.bind(2, std::int64_t{plan.device_index});
  // Only the planned chunks: a run still being written may have gained some since.
  stmt.bind(3, plan.chunks_end_mono_ns);
  const auto total = static_cast<std::size_t>(plan.chunk_rows);
  out.wall_ns.reserve(static_cast<std::size_t>(plan.rows));
  out.mono_ns.reserve(static_cast<std::size_t>(plan.rows));
  while (stmt.step()) {
    const std::int64_t first = stmt.int64(0), last = stmt.int64(1);
    const std::int64_t count = stmt.int64(2);
    if (count <= 0 || out.rows() + static_cast<std::size_t>(count) > total) return false;
    const auto rows = static_cast<std::size_t>(count);
    const std::size_t start = out.rows();
    if (!decode_times(stmt.blob(3), rows, out.wall_ns) ||
        !decode_times(stmt.blob(4), rows, out.mono_ns)) {
      return false;
    }
    if (out.mono_ns[start] != first || out.mono_ns.back() != last) return false;
    if (start > 0 && out.mono_ns[start - 1] > first) return false;
    int column = 5;
    for (std::size_t m = 0; m < kStoredMetricCount; ++m) {
      if (!wanted.test(m)) continue;
      const auto blob = stmt.blob(column++);
      auto& values = out.values[m];
      if (blob.empty()) {  // a NULL chunk column (schema 1.12's metrics): every row NULL
        if (!values.empty()) values.resize(start + rows, kNaN);
        continue;
      }
      if (values.empty() && is_all_null(blob)) continue;  // still every row NULL: stays empty
      if (values.empty()) values.reserve(static_cast<std::size_t>(plan.rows));
      if (values.size() < start) values.resize(start, kNaN);
      if (!decode_values(blob, rows, values)) return false;
    }
  }
  return out.rows() == total;
}

}  // namespace

ChunkInserter::ChunkInserter(Database& db, std::string_view schema)
    : insert_(db.prepare(fmt::format("INSERT INTO {}.sample_chunks (run_id, {}) VALUES ({})",
                                     schema, column_names(chunk_columns()),
                                     placeholders(chunk_columns().size() + 1)))) {}

void ChunkInserter::insert(std::int64_t run_id, const EncodedChunk& chunk) {
  insert_.bind(1, run_id);
  insert_.bind(2, std::int64_t{chunk.device_index});
  insert_.bind(3, chunk.first_mono_ns);
  insert_.bind(4, chunk.last_mono_ns);
  insert_.bind(5, static_cast<std::int64_t>(chunk.rows));
  insert_.bind_blob(6, chunk.wall_ns);
  insert_.bind_blob(7, chunk.mono_ns);
  for (std::size_t m = 0; m < kStoredMetricCount; ++m) {
    insert_.bind_blob(kChunkFirstMetricParameter + static_cast<int>(m), chunk.values[m]);
  }
  insert_.run();
}

namespace {

// Whether the GPUs with rows in the run are exactly those of `counts` (ascending): one index seek
// per GPU, so that rows of a GPU the counts lack are never left out.
bool same_devices(Database& db, std::string_view schema, std::int64_t run_id,
                  const std::vector<std::pair<unsigned, std::int64_t>>& counts) {
  Statement next = db.prepare(
      fmt::format("SELECT device_index FROM {}.samples WHERE run_id = ? AND device_index > ? "
                  "ORDER BY device_index LIMIT 1",
                  schema));
  std::int64_t after = -1;
  for (const auto& [device, rows] : counts) {
    next.bind(1, run_id);
    next.bind(2, after);
    if (!next.step() || next.int64(0) != std::int64_t{device}) return false;
    next.reset();
    after = device;
  }
  next.bind(1, run_id);
  next.bind(2, after);
  return !next.step();
}

}  // namespace

std::vector<std::pair<unsigned, std::int64_t>> samples_per_device(Database& db,
                                                                  std::string_view schema,
                                                                  std::int64_t run_id) {
  std::vector<std::pair<unsigned, std::int64_t>> out;
  // The writer's counts (schema 1.13) save a pass over the index, about 85 ns a row: a fifth
  // of the analysis of a GPU-hour. plan_samples() checks them against the chunks.
  if (has_table(db, "sample_counts", schema)) {
    Statement stored = db.prepare(
        fmt::format("SELECT device_index, row_count FROM {}.sample_counts WHERE run_id = ? "
                    "ORDER BY device_index",
                    schema));
    stored.bind(1, run_id);
    while (stored.step()) {
      out.emplace_back(static_cast<unsigned>(stored.int64(0)), stored.int64(1));
    }
    if (!out.empty() && same_devices(db, schema, run_id, out)) return out;
    out.clear();
  }
  Statement stmt =
      db.prepare(fmt::format("SELECT device_index, count(*) FROM {}.samples WHERE run_id = ? "
                             "GROUP BY device_index ORDER BY device_index",
                             schema));
  stmt.bind(1, run_id);
  while (stmt.step()) out.emplace_back(static_cast<unsigned>(stmt.int64(0)), stmt.int64(1));
  return out;
}

void record_sample_counts(Database& db, std::int64_t run_id,
                          const std::vector<std::pair<unsigned, std::int64_t>>& counts) {
  Statement insert = db.prepare(
      "INSERT OR REPLACE INTO main.sample_counts (run_id, device_index, row_count) "
      "VALUES (?, ?, ?)");
  for (const auto& [device, rows] : counts) {
    insert.bind(1, run_id);
    insert.bind(2, std::int64_t{device});
    insert.bind(3, rows);
    insert.run();
  }
}

namespace {

// How many of the plan's rows its GPU's chunks hold, setting chunks_end_mono_ns; 0 when they
// cannot be used (plan_samples() says when).
std::int64_t usable_chunk_rows(Database& db, std::string_view schema, SamplePlan& plan) {
  Statement chunks =
      db.prepare(fmt::format("SELECT first_mono_ns, last_mono_ns, row_count FROM {}.sample_chunks "
                             "WHERE run_id = ? AND device_index = ? ORDER BY first_mono_ns",
                             schema));
  chunks.bind(1, plan.run_id);
  chunks.bind(2, std::int64_t{plan.device_index});
  std::int64_t covered = 0;
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  bool any = false;
  while (chunks.step()) {
    const std::int64_t first = chunks.int64(0), last = chunks.int64(1), count = chunks.int64(2);
    // Not usable: empty, backwards, overlapping, or more rows than a chunk is ever written with
    // (a damaged file, whose counts must not size what the reader reserves).
    if (count <= 0 || count > static_cast<std::int64_t>(kChunkRows) || last < first ||
        (any && first < end)) {
      return 0;
    }
    covered += count;
    end = last;
    any = true;
  }
  if (!any) return 0;
  const std::int64_t after = count_rows(db, schema, plan.run_id, plan.device_index, &end);
  if (covered + after != plan.rows) return 0;
  plan.chunks_end_mono_ns = end;
  return covered;
}

}  // namespace

SamplePlan plan_samples(Database& db, std::string_view schema, std::int64_t run_id,
                        unsigned device_index, bool chunks_available,
                        std::optional<std::int64_t> known_rows) {
  SamplePlan plan;
  plan.run_id = run_id;
  plan.device_index = device_index;
  plan.rows = known_rows ? *known_rows : count_rows(db, schema, run_id, device_index, nullptr);
  if (chunks_available && plan.rows > 0) plan.chunk_rows = usable_chunk_rows(db, schema, plan);
  if (plan.chunk_rows == 0 && known_rows) {
    // A known count the chunks do not confirm (no chunks, rows added after the writer counted,
    // chunks it gave up, a damaged count) is not trusted: the rows are counted.
    const std::int64_t counted = count_rows(db, schema, run_id, device_index, nullptr);
    if (counted != plan.rows) {
      plan.rows = counted;
      if (chunks_available && counted > 0) plan.chunk_rows = usable_chunk_rows(db, schema, plan);
    }
  }
  return plan;
}

std::bitset<kMetricCount> stored_metric_columns(Database& db, std::string_view schema) {
  std::bitset<kMetricCount> present;
  Statement info = db.prepare(fmt::format("PRAGMA {}.table_info(samples)", schema));
  while (info.step()) {
    const std::string name = info.text(1);
    for (std::size_t m = 0; m < kStoredMetricCount; ++m) {
      if (kMetrics[m].name == name) present.set(m);
    }
  }
  return present;
}

namespace {

// read_sample_rows() for metrics the file has columns for.
void read_rows(Database& db, std::string_view schema, std::int64_t run_id, unsigned device_index,
               bool all, std::int64_t after_mono_ns, const std::bitset<kMetricCount>& wanted,
               SampleColumns& out) {
  Statement stmt = db.prepare(fmt::format(
      "SELECT wall_ns, mono_ns{} FROM {}.samples WHERE run_id = ? AND device_index = ?{} "
      "ORDER BY mono_ns",
      metric_list(wanted), schema, all ? "" : " AND mono_ns > ?"));
  stmt.bind(1, run_id);
  stmt.bind(2, std::int64_t{device_index});
  if (!all) stmt.bind(3, after_mono_ns);
  while (stmt.step()) {
    const std::size_t row = out.rows();
    out.wall_ns.push_back(stmt.int64(0));
    out.mono_ns.push_back(stmt.int64(1));
    int column = 2;
    for (std::size_t m = 0; m < kStoredMetricCount; ++m) {
      if (!wanted.test(m)) continue;
      // NULL reads as 0.0, so only a 0 needs the type check.
      const double v = stmt.real(column);
      put(out.values[m], row, v == 0.0 && stmt.is_null(column) ? kNaN : v);
      ++column;
    }
  }
}

}  // namespace

void read_sample_rows(Database& db, std::string_view schema, std::int64_t run_id,
                      unsigned device_index, bool all, std::int64_t after_mono_ns,
                      const std::bitset<kMetricCount>& wanted, SampleColumns& out) {
  read_rows(db, schema, run_id, device_index, all, after_mono_ns,
            wanted & stored_metric_columns(db, schema), out);
}

void read_samples(Database& db, std::string_view schema, const SamplePlan& plan,
                  const std::bitset<kMetricCount>& asked, SampleColumns& out) {
  out.clear();
  const std::bitset<kMetricCount> wanted = asked & stored_metric_columns(db, schema);
  if (plan.chunk_rows > 0) {
    if (read_chunks(db, schema, plan, wanted, out)) {
      read_rows(db, schema, plan.run_id, plan.device_index, false, plan.chunks_end_mono_ns, wanted,
                out);
      return;
    }
    out.clear();
  }
  out.wall_ns.reserve(static_cast<std::size_t>(plan.rows));
  out.mono_ns.reserve(static_cast<std::size_t>(plan.rows));
  read_rows(db, schema, plan.run_id, plan.device_index, true, 0, wanted, out);
}

}  // namespace gpuscope::store
