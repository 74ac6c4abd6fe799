// The columnar companion of the samples table (schema 1.1, table sample_chunks): one GPU's
// consecutive samples, kChunkRows at most, with the timestamps and each metric packed as a
// little-endian array in a BLOB. The samples rows stay the truth; chunks are a copy that lets
// `analyze` read a GPU-hour with a few hundred SQLite calls instead of millions. This file holds
// the pure parts: the value encodings and the builder that cuts rows into chunks
// (docs/database.md describes the format for other readers).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "core/metrics.hpp"
#include "core/run.hpp"

namespace gpuscope::store {

static_assert(std::endian::native == std::endian::little,
              "sample chunks are written as little-endian arrays with memcpy");

// Rows per chunk: 102 s of one GPU at 10 Hz. Larger chunks mean fewer SQLite calls; smaller ones
// a shorter tail read from rows after a crash.
inline constexpr std::size_t kChunkRows = 1024;

// The value SQLite hands back (sqlite3_column_double) for `value` written to metric `metric`'s
// samples column: NaN (SQLite stores NaN as NULL) for NULL, INTEGER columns rounded as the row
// writer binds them, -0.0 as 0.0 (SQLite stores an integral REAL as an integer). Chunks hold
// exactly these, so reading chunks gives bit for bit what reading rows gives.
double stored_sample_value(std::size_t metric, double value);

// One GPU's consecutive samples as columns: a decoded chunk, a chunk being built, or everything
// RunReader::read_samples() returns for one GPU. values[m] is metric m, NaN where NULL; a
// metric not asked for is left empty, and so is one whose every row is NULL when read back (a
// metric the GPU does not have costs neither memory nor a pass).
struct SampleColumns {
  std::vector<std::int64_t> wall_ns;
  std::vector<std::int64_t> mono_ns;
  std::array<std::vector<double>, kMetricCount> values;

  std::size_t rows() const { return mono_ns.size(); }
  void clear();
};

using Blob = std::vector<unsigned char>;

// Timestamps (ns): format 1 (8-byte header: the first value), then rows − 1 unsigned 32-bit
// deltas; format 2 (when a delta is negative or ≥ 2^32): rows raw int64 after the header.
Blob encode_times(std::span<const std::int64_t> ns);
// Appends `rows` timestamps decoded from `blob` to `out`; false when the blob is malformed.
bool decode_times(std::span<const unsigned char> blob, std::size_t rows,
                  std::vector<std::int64_t>& out);

// A metric column: a 16-byte header (format, width, decimals, 5 zero bytes, int64 base) and:
//   format 0: every value NULL; no payload.
//   format 1: rows float64 values; NaN is NULL.
//   format 2: values v = (base + k) / 10^decimals with k a `width`-byte unsigned integer
//             (width 1, 2, 4 or 8); k = 2^(8·width) − 1 is NULL; width 0: every value is base.
// Format 2 is chosen when every value round-trips exactly (integer percent, MHz, °C, bytes,
// counters, milliwatts), else format 1.
Blob encode_values(std::span<const double> values);
// Whether `blob` is a well-formed column of format 0 (every value NULL).
bool is_all_null(std::span<const unsigned char> blob);
// Appends `rows` decoded values to `out`; false when the blob is malformed.
bool decode_values(std::span<const unsigned char> blob, std::size_t rows, std::vector<double>& out);

// A chunk ready to insert.
struct EncodedChunk {
  unsigned device_index = 0;
  std::int64_t first_mono_ns = 0;
  std::int64_t last_mono_ns = 0;
  std::size_t rows = 0;
  Blob wall_ns;
  Blob mono_ns;
  std::array<Blob, kMetricCount> values;
};

EncodedChunk encode_chunk(unsigned device_index, const SampleColumns& columns);

// Cuts one run's samples, fed in the order they were committed, into chunks of kChunkRows rows
// per GPU. A GPU whose mono_ns goes backwards gets no further chunks (its later rows stay
// readable from the samples table, which is what readers then use).
class ChunkBuilder {
 public:
  void add(const SampleRow& row);
  // Turns every partly filled chunk into a ready one (at the end of the run).
  void finish();
  // Stops chunking every GPU (when ready chunks could not be written and pile up).
  void give_up();
  std::vector<EncodedChunk>& ready() { return ready_; }
  bool has_pending_rows() const;

 private:
  struct Device {
    SampleColumns columns;
    bool stopped = false;
  };
  void seal(unsigned device_index, Device& device);

  // By device index; a map, not a vector indexed by it: an index read from a file can be
  // anything (3e6 in a hostile database took 2.6 GB), the number of devices cannot.
  std::map<unsigned, Device> devices_;
  std::vector<EncodedChunk> ready_;
};

// Where one GPU's samples come from.
struct SamplePlan {
  std::int64_t run_id = 0;
  unsigned device_index = 0;
  std::int64_t rows = 0;                // samples rows of this GPU
  std::int64_t chunk_rows = 0;          // of which read from chunks; 0: all from rows
  std::int64_t chunks_end_mono_ns = 0;  // chunks hold exactly the rows with mono_ns ≤ this
};

}  // namespace gpuscope::store
