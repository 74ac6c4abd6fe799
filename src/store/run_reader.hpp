// Reads a run database: the runs it holds, their devices, the metric catalog, and the rows as
// streams (cursors), so an analysis over 100 M values needs memory for one row at a time. Opens
// read-only, so a database gpuscope is still writing can be read while it grows.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_description.hpp"
#include "core/gpu_process.hpp"
#include "core/health.hpp"
#include "core/metrics.hpp"
#include "core/node_energy.hpp"
#include "core/phase.hpp"
#include "store/records.hpp"
#include "store/sample_chunks.hpp"

namespace gpuscope::store {

class Database;
class Statement;
struct Column;

// Which rows a cursor visits; empty fields match everything.
struct RowFilter {
  std::optional<std::int64_t> run_id;
  std::optional<unsigned> device_index;
};

// A forward-only stream of records. Keeps the database open while it lives, even past the
// RunReader that made it.
template <typename Record>
class Cursor {
 public:
  Cursor(std::shared_ptr<Database> db, std::unique_ptr<Statement> stmt, std::string path);
  ~Cursor();
  Cursor(Cursor&&) noexcept;
  Cursor& operator=(Cursor&&) noexcept;

  // Fills `out` with the next record; false at the end. Throws Error when the file cannot be
  // read. Reusing one `out` across calls avoids allocation per row.
  bool next(Record& out);

 private:
  std::shared_ptr<Database> db_;
  std::unique_ptr<Statement> stmt_;
  std::string path_;
};

using SampleCursor = Cursor<RunSample>;            // ordered by run, device, mono_ns
using PowerSampleCursor = Cursor<RunPowerSample>;  // ordered by run, device, mono_ns
using EventCursor = Cursor<RunEvent>;              // ordered by run, mono_ns
using OutputCursor = Cursor<RunOutputLine>;        // ordered by run, mono_ns

class RunReader {
 public:
  // Opens and validates `path`; throws Error::usage when it is missing, not SQLite, not a
  // gpuscope run database, or written by a newer gpuscope.
  static RunReader open(const std::filesystem::path& path);

  // The schema version the file was written with (PRAGMA user_version).
  int schema_version() const { return schema_version_; }
  // Its minor version (meta 'schema_minor_version'; 0 for files of gpuscope 0.1).
  int schema_minor_version() const { return schema_minor_version_; }
  // Whether the file has sample_chunks, the columnar copy of samples (schema 1.1).
  bool has_sample_chunks() const { return has_chunks_; }
  const std::filesystem::path& path() const { return path_; }

  // While one lives, the reader's statements share one read transaction: one lock and one
  // check for a hot journal instead of one per statement (thousands of stat() calls over a
  // folder of rank files), and one snapshot of a file still being written (WAL: the writer is
  // not held up). Keep it short on a file something else may write in rollback mode.
  class ReadTransaction {
   public:
    explicit ReadTransaction(const RunReader& reader);
    ~ReadTransaction();
    ReadTransaction(const ReadTransaction&) = delete;
    ReadTransaction& operator=(const ReadTransaction&) = delete;

   private:
    Database* db_;
    bool open_ = false;
  };

  // Every run in the file, by run_id.
  std::vector<StoredRun> runs() const;
  // The GPUs `run_id` sampled, by device index.
  std::vector<DeviceDescription> devices(std::int64_t run_id) const;
  // The metric catalog as stored in the file.
  std::vector<StoredMetric> metrics() const;
  // The processes seen on the GPUs of `run_id` (schema 1.3; empty for an older file), in the
  // order they were first seen, and what each held on each GPU at each look, by device and time.
  std::vector<GpuProcess> processes(std::int64_t run_id) const;
  std::vector<ProcessSample> process_samples(std::int64_t run_id) const;
  // The phases of `run_id` (schema 1.5; empty for an older file), in start order.
  std::vector<Phase> phases(std::int64_t run_id) const;
  // The same, one at a time.
  void for_each_phase(std::int64_t run_id, const std::function<void(Phase&&)>& fn) const;
  // The health counters of `run_id`'s GPUs (schema 1.8; empty for an older file), by device,
  // then time; what a GPU did not report is absent, never 0.
  std::vector<HealthRow> health_samples(std::int64_t run_id) const;
  // The node's energy domains, their readings (by domain, then time) and the CPU times of
  // `run_id` (schema 1.10; empty for an older file; core/node_energy.hpp).
  std::vector<NodeEnergyDomain> node_domains(std::int64_t run_id) const;
  std::vector<NodeEnergySample> node_samples(std::int64_t run_id) const;
  std::vector<NodeCpuTime> node_cpu_times(std::int64_t run_id) const;

  SampleCursor samples(const RowFilter& filter = {}) const;
  // Like samples(), reading only the metrics in `only` (the others come back absent): a first
  // pass over a large run that needs a few columns reads much less.
  SampleCursor samples(const RowFilter& filter, std::span<const Metric> only) const;
  PowerSampleCursor power_samples(const RowFilter& filter = {}) const;
  // Events of one run (or all); filter.device_index is ignored for events and output.
  EventCursor events(const RowFilter& filter = {}) const;
  OutputCursor output(const RowFilter& filter = {}) const;

  // Where one GPU's samples will be read from (SamplePlan): chunks for the part they cover,
  // rows for the rest. `use_chunks` false plans rows only.
  // `known_rows`: the GPU's count from samples_per_device(), which saves a pass.
  SamplePlan sample_plan(std::int64_t run_id, unsigned device_index, bool use_chunks = true,
                         std::optional<std::int64_t> known_rows = std::nullopt) const;
  // How many samples each GPU of the run has, by device index (ascending): one pass.
  std::vector<std::pair<unsigned, std::int64_t>> samples_per_device(std::int64_t run_id) const;
  // One GPU's samples in mono_ns order, as columns (store/sample_chunks.hpp): the timestamps and
  // `metrics` (the others stay empty), NULL as NaN; the same values, bit for bit, whether they
  // come from chunks or rows. The fast way to read a whole GPU.
  void read_samples(const SamplePlan& plan, std::span<const Metric> metrics,
                    SampleColumns& out) const;

  // How many samples match, without reading them.
  std::int64_t count_samples(const RowFilter& filter = {}) const;

  // Calls fn(const RunSample&) for each matching sample in order; returns how many.
  template <typename Fn>
  std::int64_t for_each_sample(const RowFilter& filter, Fn&& fn) const {
    auto cursor = samples(filter);
    RunSample sample;
    std::int64_t n = 0;
    while (cursor.next(sample)) {
      fn(static_cast<const RunSample&>(sample));
      ++n;
    }
    return n;
  }

 private:
  RunReader(std::shared_ptr<Database> db, std::filesystem::path path, int schema_version);
  template <typename Record>
  Cursor<Record> query(std::string_view table, std::span<const Column> columns,
                       const RowFilter& filter, bool by_device, std::string_view order) const;

  std::shared_ptr<Database> db_;
  std::filesystem::path path_;
  int schema_version_ = 0;
  int schema_minor_version_ = 0;
  bool has_chunks_ = false;
};

}  // namespace gpuscope::store
