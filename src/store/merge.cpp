#include "store/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <system_error>

#include "core/error.hpp"
#include "core/output_check.hpp"
#include "store/chunk_io.hpp"
#include "store/health_tables.hpp"
#include "store/kernel_tables.hpp"
#include "store/node_tables.hpp"
#include "store/phase_tables.hpp"
#include "store/run_file.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/sqlite_errors.hpp"
#include "store/time_text.hpp"
#include "util/output_file.hpp"

namespace gpuscope::store {
namespace fs = std::filesystem;

namespace {

// Files as given; directories replaced by their *.db files in name order.
std::vector<fs::path> expand_inputs(const std::vector<fs::path>& inputs, const fs::path& output) {
  std::vector<fs::path> files;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (!fs::is_directory(input, ec)) {
      if (util::same_file(input, output)) {
        throw Error::usage(input.string() + " is both an input and the output", "",
                           "write the merged database elsewhere");
      }
      files.push_back(input);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(input, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".db" &&
          !util::same_file(entry.path(), output)) {
        found.push_back(entry.path());
      }
    }
    if (ec) throw Error::usage("cannot list " + input.string(), ec.message());
    if (found.empty()) {
      throw Error::usage(input.string() + " holds no .db files", "", "give run databases");
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  if (files.empty()) throw Error::usage("nothing to merge", "", "give run databases to merge");
  return files;
}

std::string describe_run(const Statement& run) {
  return fmt::format("host {}, SLURM job {} step {} rank {}, started {}",
                     run.opt_text(1).value_or("?"), run.opt_text(2).value_or("-"),
                     run.opt_text(3).value_or("-"), run.opt_int64(4).value_or(-1),
                     iso8601(run.int64(5)));
}

class Merger {
 public:
  explicit Merger(Database& db) : db_(db), insert_chunk_(db) {}

  void add(const fs::path& input, MergeSummary& summary) {
    Statement attach = db_.prepare("ATTACH DATABASE ? AS src");
    attach.bind(1, input.string());
    attach.run();
    try {
      db_.exec("BEGIN");
      copy_runs(input, summary);
      db_.exec("COMMIT");
    } catch (...) {
      if (sqlite3_get_autocommit(db_.handle()) == 0) db_.exec("ROLLBACK");
      db_.exec("DETACH DATABASE src");
      throw;
    }
    db_.exec("DETACH DATABASE src");
  }

 private:
  void copy_runs(const fs::path& input, MergeSummary& summary) {
    const bool chunks = has_sample_chunks(db_, "src");
    const bool processes = has_table(db_, "processes", "src");
    const bool phases = has_table(db_, "phases", "src");
    const bool health = has_table(db_, "health_samples", "src");
    const bool node = has_table(db_, "node_energy_domains", "src");
    // origin (schema 1.7) tells apart runs of two logs that share everything else: files of
    // one node's GPUs, without a host, started together. An older input has none: NULL.
    const bool origin = has_column(db_, "runs", "origin", "src");
    Statement runs = db_.prepare(fmt::format(
        "SELECT run_id, host, slurm_job_id, slurm_step_id, slurm_rank, start_wall_ns, {} "
        "FROM src.runs ORDER BY run_id",
        origin ? "origin" : "NULL"));
    while (runs.step()) {
      refuse_duplicate(runs, input);
      const std::int64_t old_id = runs.int64(0);
      const std::int64_t new_id = copy_run_row(old_id);
      origin_[new_id] = input;
      copy_rows("devices", device_columns(), old_id, new_id);
      summary.rows.samples += copy_rows("samples", sample_columns(), old_id, new_id);
      copy_chunks(old_id, new_id, chunks);
      summary.rows.power_samples += copy_rows("power_samples", power_columns(), old_id, new_id);
      summary.rows.events += copy_rows("events", event_columns(), old_id, new_id);
      summary.rows.output_lines += copy_rows("output", output_columns(), old_id, new_id);
      copy_kernel_trace(db_, old_id, new_id);  // schema 1.2: the kernel trace, when there is one
      if (processes) {                         // schema 1.3: the processes seen on the GPUs
        copy_rows("processes", process_columns(), old_id, new_id);
        copy_rows("process_samples", process_sample_columns(), old_id, new_id);
      }
      if (phases) copy_rows("phases", phase_columns(), old_id, new_id);  // schema 1.5
      if (health) {  // schema 1.8: the GPUs' health counters
        summary.rows.health_samples +=
            copy_rows("health_samples", health_columns(), old_id, new_id);
      }
      if (node) {  // schema 1.10: the node's energy stays with its run (and so its host)
        summary.rows.node_rows +=
            copy_rows("node_energy_domains", node_domain_columns(), old_id, new_id) +
            copy_rows("node_energy_samples", node_sample_columns(), old_id, new_id) +
            copy_rows("node_cpu_time", node_cpu_time_columns(), old_id, new_id);
      }
      ++summary.runs;
    }
  }

  void refuse_duplicate(const Statement& run, const fs::path& input) {
    Statement same = db_.prepare(
        "SELECT run_id FROM main.runs WHERE host IS ?1 AND slurm_job_id IS ?2 AND "
        "slurm_step_id IS ?3 AND slurm_rank IS ?4 AND start_wall_ns = ?5 AND origin IS ?6");
    same.bind(1, run.opt_text(1));
    same.bind(2, run.opt_text(2));
    same.bind(3, run.opt_text(3));
    same.bind(4, run.opt_int64(4));
    same.bind(5, run.int64(5));
    same.bind(6, run.opt_text(6));
    if (!same.step()) return;
    const fs::path& first = origin_.at(same.int64(0));
    const std::string where =
        first == input ? input.string() + " holds the same run twice"
                       : fmt::format("{} and {} hold the same run", first.string(), input.string());
    throw Error::usage(where, describe_run(run), "merge each rank's database once");
  }

  std::int64_t copy_run_row(std::int64_t old_id) {
    const std::string names = column_names(run_columns());
    // An input from before schema 1.3 lacks the rank columns: they are copied as NULL.
    Statement copy = db_.prepare("INSERT INTO main.runs (" + names + ") SELECT " +
                                 select_list(db_, "runs", run_columns(), "src") +
                                 " FROM src.runs WHERE run_id = ?");
    copy.bind(1, old_id);
    copy.run();
    return db_.last_insert_rowid();
  }

  std::int64_t copy_rows(std::string_view table, std::span<const Column> columns,
                         std::int64_t old_id, std::int64_t new_id) {
    return copy_run_rows(db_, table, columns, old_id, new_id);
  }

  // The input's chunks as they are, then chunks for the samples they do not cover (all of a 1.0
  // input, the tail of a run whose gpuscope was killed), so the merged file is columnar
  // throughout. Rows are streamed: memory stays at one chunk per GPU.
  // The run's chunks, copied or built for the rows that have none, and each GPU's row count
  // (sample_counts), which spares readers of the output a pass over its samples index.
  void copy_chunks(std::int64_t old_id, std::int64_t new_id, bool input_has_chunks) {
    if (input_has_chunks) copy_rows("sample_chunks", chunk_columns(), old_id, new_id);
    std::vector<std::pair<unsigned, std::int64_t>> counts;
    for (const auto& [device, rows] : samples_per_device(db_, "src", old_id)) {
      const SamplePlan plan = plan_samples(db_, "src", old_id, device, input_has_chunks, rows);
      counts.emplace_back(device, plan.rows);
      if (plan.chunk_rows == plan.rows) continue;
      if (plan.chunk_rows == 0 && input_has_chunks) {
        Statement drop =
            db_.prepare("DELETE FROM main.sample_chunks WHERE run_id = ? AND device_index = ?");
        drop.bind(1, new_id);
        drop.bind(2, std::int64_t{device});
        drop.run();
      }
      build_chunks(plan, new_id);
    }
    record_sample_counts(db_, new_id, counts);
  }

  void build_chunks(const SamplePlan& plan, std::int64_t new_id) {
    const bool all = plan.chunk_rows == 0;
    Statement rows = db_.prepare(fmt::format(
        "SELECT device_index, wall_ns, mono_ns, {} FROM src.samples WHERE run_id = ? AND "
        "device_index = ?{} ORDER BY mono_ns",
        select_list(db_, "samples", std::span(sample_columns()).subspan(3), "src"),
        all ? "" : " AND mono_ns > ?"));
    rows.bind(1, plan.run_id);
    rows.bind(2, std::int64_t{plan.device_index});
    if (!all) rows.bind(3, plan.chunks_end_mono_ns);
    ChunkBuilder builder;
    SampleRow row;
    auto insert_ready = [&] {
      for (const auto& chunk : builder.ready()) insert_chunk_.insert(new_id, chunk);
      builder.ready().clear();
    };
    while (rows.step()) {
      row.device_index = static_cast<unsigned>(rows.int64(0));
      row.wall_ns = rows.int64(1);
      row.mono_ns = rows.int64(2);
      row.present.reset();
      for (std::size_t m = 0; m < kStoredMetricCount; ++m) {
        const int column = 3 + static_cast<int>(m);
        if (!rows.is_null(column)) row.set(static_cast<Metric>(m), rows.real(column));
      }
      builder.add(row);
      insert_ready();
    }
    builder.finish();
    insert_ready();
  }

  Database& db_;
  ChunkInserter insert_chunk_;
  std::map<std::int64_t, fs::path> origin_;  // merged run_id → the input it came from
};

// The schema's text, to tell a file of this gpuscope's schema from any other.
std::vector<std::string> schema_text(Database& db) {
  std::vector<std::string> out;
  Statement list = db.prepare(
      "SELECT type || ' ' || name || ' ' || ifnull(sql, '') FROM sqlite_schema "
      "ORDER BY type, name");
  while (list.step()) out.push_back(list.opt_text(0).value_or(""));
  return out;
}

// What merge() would count copying `part` into a fresh output, when that output would be `part`
// itself (but for created_at): nullopt when it would not, or when `part` cannot be checked.
std::optional<MergeSummary> merged_as_is(Database& db, const fs::path& part) {
  if (check_run_database(db, part) != kSchemaVersion ||
      schema_minor_version(db) != kSchemaMinorVersion) {
    return std::nullopt;
  }
  // Tables merge() does not copy (sweeps, grid intensity) must be absent or empty, and the
  // tables it copies must be the ones it creates.
  Database fresh(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
  create_schema(fresh, "gpuscope");
  if (schema_text(db) != schema_text(fresh)) return std::nullopt;
  if (db.query_int("SELECT count(*) FROM grid_intensity").value_or(1) != 0) return std::nullopt;
  // One run, numbered as merge() numbers the first.
  if (db.query_int("SELECT count(*) FROM runs").value_or(0) != 1 ||
      db.query_int("SELECT run_id FROM runs").value_or(0) != 1) {
    return std::nullopt;
  }
  // Every GPU's samples in chunks: merge() would build the missing ones.
  std::vector<unsigned> devices;
  {
    Statement list = db.prepare("SELECT DISTINCT device_index FROM samples WHERE run_id = 1");
    while (list.step()) devices.push_back(static_cast<unsigned>(list.int64(0)));
  }
  MergeSummary summary;
  for (unsigned device : devices) {
    const SamplePlan plan = plan_samples(db, "main", 1, device, true);
    if (plan.chunk_rows != plan.rows) return std::nullopt;
    summary.rows.samples += plan.rows;
  }
  summary.inputs = {part};
  summary.runs = 1;
  summary.rows.power_samples = db.query_int("SELECT count(*) FROM power_samples").value_or(0);
  summary.rows.events = db.query_int("SELECT count(*) FROM events").value_or(0);
  summary.rows.output_lines = db.query_int("SELECT count(*) FROM output").value_or(0);
  summary.rows.health_samples = count_health_samples(db, 1);
  summary.rows.node_rows = count_node_rows(db, 1);
  return summary;
}

// Moves `part` to `output` when merging it alone would write the same file; nullopt (and `part`
// untouched) when it would not.
std::optional<MergeSummary> move_part(const fs::path& output, const fs::path& part,
                                      bool overwrite) {
  std::error_code ec;
  if (!fs::is_regular_file(part, ec) || fs::exists(part.string() + "-wal", ec) ||
      fs::exists(part.string() + "-journal", ec)) {
    return std::nullopt;
  }
  std::optional<MergeSummary> summary;
  {
    Database db(part, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
    const auto mode = [&] {
      Statement journal = db.prepare("PRAGMA journal_mode");
      return journal.step() ? journal.opt_text(0).value_or("") : std::string();
    }();
    if (mode != "delete") return std::nullopt;
    summary = merged_as_is(db, part);
    if (!summary) return std::nullopt;
    Statement stamp = db.prepare("UPDATE meta SET value = ? WHERE key = 'created_at'");
    stamp.bind(1, iso8601_now());
    stamp.run();
  }
  const fs::path target = check_output_path(output, overwrite, {part});
  // Moved (or copied, across file systems) into a private folder beside the target, then renamed
  // over it: nothing is ever written at a name someone else could plant a link at.
  util::StagedFile staged(target);
  if (const auto error = staged.create()) throw_write_error(target, error);
  try {
    fs::rename(part, staged.path(), ec);
    if (ec) fs::copy_file(part, staged.path());  // EXDEV
    remove_companion_files(target);              // a stale -wal would be replayed into the new file
    if (const auto error = staged.commit()) throw_write_error(target, error);
  } catch (const fs::filesystem_error& e) {
    throw Error("cannot write " + target.string(), e.code().message(),
                "check the disk and the -o path");
  }
  return summary;
}

}  // namespace

MergeSummary merge_parts(const fs::path& output, const std::vector<fs::path>& parts,
                         bool overwrite) {
  if (parts.size() == 1) {
    const auto moved = translate_sqlite_errors(
        "cannot merge " + parts.front().string(), "check the disk and the input",
        [&] { return move_part(output, parts.front(), overwrite); });
    if (moved) return *moved;
  }
  return merge(output, parts, overwrite);
}

MergeSummary merge(const fs::path& output, const std::vector<fs::path>& inputs, bool overwrite) {
  MergeSummary summary;
  summary.inputs = expand_inputs(inputs, output);
  for (const auto& input : summary.inputs) open_run_database(input);  // refuse early, clearly

  // Built under another name and renamed over `output` at the end, so a failed merge leaves no
  // output, and an output being replaced stays intact until the new one is complete.
  const fs::path target = check_output_path(output, overwrite, summary.inputs);
  // SQLite opens (and follows links at) the file and its -journal: they are made in a private
  // folder beside the target (util::StagedFile), which goes with them on every path.
  util::StagedFile staged(target);
  if (const auto error = staged.create()) throw_write_error(target, error);
  const fs::path& partial = staged.path();
  {
    auto db = create_database(partial);
    Merger merger(*db);
    for (const auto& input : summary.inputs) {
      translate_sqlite_errors("cannot merge " + input.string(), "check the disk and the input",
                              [&] { merger.add(input, summary); });
    }
    if (auto problem = close_run_file(*db, partial))
      throw Error("cannot finish " + output.string(), *problem);
    db.reset();
    remove_companion_files(target);  // a stale -wal would be replayed into the new file
    if (const auto ec = staged.commit()) throw_write_error(target, ec);
  }
  return summary;
}

}  // namespace gpuscope::store
