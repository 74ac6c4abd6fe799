#include "store/sample_chunks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace gpuscope::store {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kValueHeader = 16;
constexpr std::size_t kTimeHeader = 8;
constexpr unsigned char kAllNull = 0, kFloat64 = 1, kScaled = 2;
constexpr unsigned char kTimeDeltas = 1, kTimeRaw = 2;
constexpr std::array<double, 4> kPowersOfTen = {1, 10, 100, 1000};
// Integers up to 2^53 are exact doubles.
constexpr double kExactLimit = 9007199254740992.0;

template <typename T>
void put(Blob& blob, std::size_t at, T value) {
  std::memcpy(blob.data() + at, &value, sizeof value);
}

template <typename T>
T get(const unsigned char* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// The integer k with k / 10^decimals == value exactly (the decoder's expression), if any.
bool scaled_integer(double value, std::size_t decimals, std::int64_t& k) {
  const double p = kPowersOfTen[decimals];
  const double scaled = value * p;
  if (!(std::fabs(scaled) < kExactLimit)) return false;
  k = static_cast<std::int64_t>(std::llround(scaled));
  const double back = decimals == 0 ? static_cast<double>(k) : static_cast<double>(k) / p;
  return same_bits(back, value);
}

template <typename Word>
void pack(Blob& blob, std::span<const double> values, const std::vector<std::int64_t>& ks,
          std::int64_t base) {
  const std::size_t start = blob.size();
  blob.resize(start + values.size() * sizeof(Word));
  std::size_t next = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Word word = std::isnan(values[i])
                          ? std::numeric_limits<Word>::max()
                          : static_cast<Word>(static_cast<std::uint64_t>(ks[next++] - base));
    std::memcpy(blob.data() + start + i * sizeof(Word), &word, sizeof(Word));
  }
}

template <typename Word>
void unpack(const unsigned char* data, std::size_t rows, std::int64_t base, std::size_t decimals,
            double* out) {
  const double p = kPowersOfTen[decimals];
  for (std::size_t i = 0; i < rows; ++i) {
    const Word word = get<Word>(data + i * sizeof(Word));
    if (word == std::numeric_limits<Word>::max()) {
      out[i] = kNaN;
    } else {
      const auto v = static_cast<double>(base + static_cast<std::int64_t>(word));
      out[i] = decimals == 0 ? v : v / p;
    }
  }
}

}  // namespace

double stored_sample_value(std::size_t metric, double value) {
  if (std::isnan(value)) return kNaN;
  if (kMetrics[metric].storage == MetricStorage::Integer && std::fabs(value) < 9.2e18) {
    // As RowInserter binds it, and as sqlite3_column_double converts it back.
    return static_cast<double>(static_cast<std::int64_t>(std::llround(value)));
  }
  return value == 0 ? 0.0 : value;
}

void SampleColumns::clear() {
  wall_ns.clear();
  mono_ns.clear();
  for (auto& v : values) v.clear();
}

Blob encode_times(std::span<const std::int64_t> ns) {
  Blob blob;
  if (ns.empty()) return blob;
  bool deltas = true;
  for (std::size_t i = 1; i < ns.size() && deltas; ++i) {
    const std::int64_t d = ns[i] - ns[i - 1];
    deltas = d >= 0 && d <= std::int64_t{std::numeric_limits<std::uint32_t>::max()};
  }
  if (deltas) {
    blob.resize(1 + kTimeHeader + (ns.size() - 1) * 4);
    blob[0] = kTimeDeltas;
    put(blob, 1, ns[0]);
    for (std::size_t i = 1; i < ns.size(); ++i) {
      put(blob, 1 + kTimeHeader + (i - 1) * 4, static_cast<std::uint32_t>(ns[i] - ns[i - 1]));
    }
  } else {
    blob.resize(1 + ns.size() * 8);
    blob[0] = kTimeRaw;
    std::memcpy(blob.data() + 1, ns.data(), ns.size() * 8);
  }
  return blob;
}

bool decode_times(std::span<const unsigned char> blob, std::size_t rows,
                  std::vector<std::int64_t>& out) {
  if (rows == 0) return true;
  if (blob.empty()) return false;
  const std::size_t start = out.size();
  if (blob[0] == kTimeDeltas && blob.size() == 1 + kTimeHeader + (rows - 1) * 4) {
    out.resize(start + rows);
    std::int64_t t = get<std::int64_t>(blob.data() + 1);
    out[start] = t;
    const unsigned char* deltas = blob.data() + 1 + kTimeHeader;
    for (std::size_t i = 1; i < rows; ++i) {
      t += get<std::uint32_t>(deltas + (i - 1) * 4);
      out[start + i] = t;
    }
    return true;
  }
  if (blob[0] == kTimeRaw && blob.size() == 1 + rows * 8) {
    out.resize(start + rows);
    std::memcpy(out.data() + start, blob.data() + 1, rows * 8);
    return true;
  }
  return false;
}

Blob encode_values(std::span<const double> values) {
  Blob blob(kValueHeader, 0);
  std::size_t present = 0;
  for (double v : values) present += std::isnan(v) ? 0U : 1U;
  if (present == 0) {
    blob[0] = kAllNull;
    return blob;
  }
  // The fewest decimals at which every value is an exact scaled integer.
  std::vector<std::int64_t> ks;
  ks.reserve(present);
  std::size_t decimals = 0;
  for (; decimals < kPowersOfTen.size(); ++decimals) {
    ks.clear();
    std::int64_t k = 0;
    bool exact = true;
    for (double v : values) {
      if (std::isnan(v)) continue;
      if (!scaled_integer(v, decimals, k)) {
        exact = false;
        break;
      }
      ks.push_back(k);
    }
    if (exact) break;
  }
  if (decimals == kPowersOfTen.size()) {
    blob[0] = kFloat64;
    blob.resize(kValueHeader + values.size() * 8);
    std::memcpy(blob.data() + kValueHeader, values.data(), values.size() * 8);
    return blob;
  }
  const auto [low, high] = std::minmax_element(ks.begin(), ks.end());
  const std::int64_t base = *low;
  const auto range = static_cast<std::uint64_t>(*high - *low);
  const bool nulls = present < values.size();
  std::size_t width = 8;
  if (range == 0 && !nulls) {
    width = 0;
  } else if (range < 0xffU) {
    width = 1;
  } else if (range < 0xffffU) {
    width = 2;
  } else if (range < 0xffffffffU) {
    width = 4;
  }
  blob[0] = kScaled;
  blob[1] = static_cast<unsigned char>(width);
  blob[2] = static_cast<unsigned char>(decimals);
  put(blob, 8, base);
  switch (width) {
    case 1:
      pack<std::uint8_t>(blob, values, ks, base);
      break;
    case 2:
      pack<std::uint16_t>(blob, values, ks, base);
      break;
    case 4:
      pack<std::uint32_t>(blob, values, ks, base);
      break;
    case 8:
      pack<std::uint64_t>(blob, values, ks, base);
      break;
    default:
      break;
  }
  return blob;
}

bool is_all_null(std::span<const unsigned char> blob) {
  return blob.size() == kValueHeader && blob[0] == kAllNull;
}

bool decode_values(std::span<const unsigned char> blob, std::size_t rows,
                   std::vector<double>& out) {
  if (blob.size() < kValueHeader) return false;
  const std::size_t start = out.size();
  const unsigned char format = blob[0];
  const std::size_t width = blob[1];
  const std::size_t decimals = blob[2];
  const auto base = get<std::int64_t>(blob.data() + 8);
  const unsigned char* payload = blob.data() + kValueHeader;
  const std::size_t payload_size = blob.size() - kValueHeader;
  if (format == kAllNull && payload_size == 0) {
    out.resize(start + rows, kNaN);
    return true;
  }
  if (format == kFloat64 && payload_size == rows * 8) {
    out.resize(start + rows);
    std::memcpy(out.data() + start, payload, rows * 8);
    return true;
  }
  if (format != kScaled || decimals >= kPowersOfTen.size() || payload_size != rows * width) {
    return false;
  }
  out.resize(start + rows);
  double* to = out.data() + start;
  switch (width) {
    case 0: {
      const double p = kPowersOfTen[decimals];
      const auto v = static_cast<double>(base);
      std::fill(to, to + rows, decimals == 0 ? v : v / p);
      return true;
    }
    case 1:
      unpack<std::uint8_t>(payload, rows, base, decimals, to);
      return true;
    case 2:
      unpack<std::uint16_t>(payload, rows, base, decimals, to);
      return true;
    case 4:
      unpack<std::uint32_t>(payload, rows, base, decimals, to);
      return true;
    case 8:
      unpack<std::uint64_t>(payload, rows, base, decimals, to);
      return true;
    default:
      out.resize(start);
      return false;
  }
}

EncodedChunk encode_chunk(unsigned device_index, const SampleColumns& columns) {
  EncodedChunk chunk;
  chunk.device_index = device_index;
  chunk.rows = columns.rows();
  if (chunk.rows > 0) {
    chunk.first_mono_ns = columns.mono_ns.front();
    chunk.last_mono_ns = columns.mono_ns.back();
  }
  chunk.wall_ns = encode_times(columns.wall_ns);
  chunk.mono_ns = encode_times(columns.mono_ns);
  for (std::size_t m = 0; m < kStoredMetricCount; ++m)
    chunk.values[m] = encode_values(columns.values[m]);
  return chunk;
}

void ChunkBuilder::add(const SampleRow& row) {
  Device& device = devices_[row.device_index];
  if (device.stopped) return;
  SampleColumns& c = device.columns;
  if (!c.mono_ns.empty() && row.mono_ns < c.mono_ns.back()) {
    // Out of order: chunks would no longer list rows as a reader ordering by mono_ns sees them.
    device.stopped = true;
    c.clear();
    return;
  }
  c.wall_ns.push_back(row.wall_ns);
  c.mono_ns.push_back(row.mono_ns);
  for (std::size_t m = 0; m < kStoredMetricCount; ++m) {
    c.values[m].push_back(row.present.test(m) ? stored_sample_value(m, row.values[m]) : kNaN);
  }
  if (c.rows() >= kChunkRows) seal(row.device_index, device);
}

void ChunkBuilder::seal(unsigned device_index, Device& device) {
  if (device.columns.rows() == 0) return;
  ready_.push_back(encode_chunk(device_index, device.columns));
  device.columns.clear();
}

void ChunkBuilder::finish() {
  for (auto& [index, device] : devices_) {
    if (!device.stopped) seal(index, device);
  }
}

void ChunkBuilder::give_up() {
  ready_.clear();
  for (auto& [index, device] : devices_) {
    device.stopped = true;
    device.columns.clear();
  }
}

bool ChunkBuilder::has_pending_rows() const {
  return std::any_of(devices_.begin(), devices_.end(),
                     [](const auto& entry) { return entry.second.columns.rows() > 0; });
}

}  // namespace gpuscope::store
