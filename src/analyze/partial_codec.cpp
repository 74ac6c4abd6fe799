#include "analyze/partial_codec.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"

namespace gpuscope::analyze {

// Adding a field to one of these means writing and reading it below: the sizes make the build
// fail until then (on this ABI; elsewhere the check is skipped).
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(Summary) == 56, "a field was added to Summary: write and read it here");
static_assert(sizeof(GpuEnergy) == 192, "a field was added to GpuEnergy: write and read it here");
static_assert(sizeof(GpuReport) == 3512, "a field was added to GpuReport: write and read it here");
static_assert(sizeof(PreparedDevice) == 13128,
              "a field was added to PreparedDevice: write and read it here");
static_assert(sizeof(PhaseGpuPart) == 128, "a field was added to PhaseGpuPart: write and read it");
static_assert(sizeof(MigBins) == 104, "a field was added to MigBins: write and read it here");
static_assert(sizeof(MigEstimate) == 88, "a field was added to MigEstimate: write and read it");
static_assert(sizeof(MigParentSplit) == 56, "a field was added to MigParentSplit: write it here");
static_assert(sizeof(ThrottleTime) == 64, "a field was added to ThrottleTime: write it here");
static_assert(sizeof(QuantileSketch) == 112, "a field was added to QuantileSketch: write it here");
static_assert(sizeof(ValueCounts) == 48, "a field was added to ValueCounts: write it here");
#endif

void PartWriter::text(std::string_view v) {
  u64(v.size());
  bytes_.append(v);
}

void PartReader::damaged(std::string_view detail) const {
  throw Error(fmt::format("{} is damaged or cut off", what_), std::string(detail),
              "run the partial step again into an empty directory");
}

void PartReader::raw(void* p, std::size_t n) {
  if (bytes_.size() - at_ < n) damaged("it ends in the middle of a record");
  std::memcpy(p, bytes_.data() + at_, n);
  at_ += n;
}

std::size_t PartReader::count(std::size_t element_size) {
  const std::uint64_t n = u64();
  if (element_size > 0 && n > (bytes_.size() - at_) / element_size) {
    damaged(fmt::format("a count of {} is more than the bytes left hold", n));
  }
  return static_cast<std::size_t>(n);
}

std::string PartReader::text() {
  const std::size_t n = count(1);
  std::string v(bytes_.substr(at_, n));
  at_ += n;
  return v;
}

namespace {

__extension__ typedef unsigned __int128 Bits128;

void put(PartWriter& out, double v);
void get(PartReader& in, double& v);
void put(PartWriter& out, const std::string& v);
void get(PartReader& in, std::string& v);
void put(PartWriter& out, const Summary& v);
void get(PartReader& in, Summary& v);
void put(PartWriter& out, const ThrottleTime& v);
void get(PartReader& in, ThrottleTime& v);
void put(PartWriter& out, const GpuGridSeries& v);
void get(PartReader& in, GpuGridSeries& v);
void put(PartWriter& out, const MigEstimate& v);
void get(PartReader& in, MigEstimate& v);
void put(PartWriter& out, const MigParentSplit& v);
void get(PartReader& in, MigParentSplit& v);
template <typename T, std::size_t N>
void put(PartWriter& out, const std::array<T, N>& v);
template <typename T, std::size_t N>
void get(PartReader& in, std::array<T, N>& v);

void put(PartWriter& out, double v) {
  out.f64(v);
}
void get(PartReader& in, double& v) {
  v = in.f64();
}

template <typename T>
void put(PartWriter& out, const std::optional<T>& v) {
  out.u8(v ? 1 : 0);
  if (v) put(out, *v);
}
template <typename T>
void get(PartReader& in, std::optional<T>& v) {
  const std::uint8_t present = in.u8();
  if (present > 1) in.damaged("a flag is neither 0 nor 1");
  v.reset();
  if (present) get(in, v.emplace());
}

template <typename T>
void put(PartWriter& out, const std::vector<T>& v) {
  out.u64(v.size());
  for (const auto& x : v) put(out, x);
}
template <typename T>
void get(PartReader& in, std::vector<T>& v) {
  v.resize(in.count(1));
  for (auto& x : v) get(in, x);
}

template <typename T, std::size_t N>
void put(PartWriter& out, const std::array<T, N>& v) {
  for (const auto& x : v) put(out, x);
}
template <typename T, std::size_t N>
void get(PartReader& in, std::array<T, N>& v) {
  for (auto& x : v) get(in, x);
}

void put(PartWriter& out, const std::string& v) {
  out.text(v);
}
void get(PartReader& in, std::string& v) {
  v = in.text();
}

void put(PartWriter& out, const Summary& v) {
  out.u64(v.count);
  for (double x : {v.mean, v.median, v.p5, v.p95, v.min, v.max}) out.f64(x);
}
void get(PartReader& in, Summary& v) {
  v.count = in.u64();
  for (double* x : {&v.mean, &v.median, &v.p5, &v.p95, &v.min, &v.max}) *x = in.f64();
}

void put(PartWriter& out, const ThrottleTime& v) {
  put(out, v.seconds);
  out.f64(v.any_s);
  out.f64(v.observed_s);
}
void get(PartReader& in, ThrottleTime& v) {
  get(in, v.seconds);
  v.any_s = in.f64();
  v.observed_s = in.f64();
}

void put(PartWriter& out, const GpuEnergy& v) {
  put(out, v.counter_j);
  put(out, v.carbon_g);
  put(out, v.slot_j);
  put(out, v.integrated_j);
  put(out, v.average_power_w);
  put(out, v.peak_power_w);
  put(out, v.power_limit_w);
  put(out, v.throttle);
}
void get(PartReader& in, GpuEnergy& v) {
  get(in, v.counter_j);
  get(in, v.carbon_g);
  get(in, v.slot_j);
  get(in, v.integrated_j);
  get(in, v.average_power_w);
  get(in, v.peak_power_w);
  get(in, v.power_limit_w);
  get(in, v.throttle);
}

void put(PartWriter& out, const GpuGridSeries& v) {
  out.u32(static_cast<std::uint32_t>(v.metric));
  out.u64(v.mean.size());
  for (float x : v.mean) out.f32(x);
}
void get(PartReader& in, GpuGridSeries& v) {
  const std::uint32_t metric = in.u32();
  if (metric >= kMetricCount) in.damaged(fmt::format("metric {} does not exist", metric));
  v.metric = static_cast<Metric>(metric);
  v.mean.resize(in.count(sizeof(float)));
  for (float& x : v.mean) x = in.f32();
}

void put(PartWriter& out, const MigEstimate& v) {
  out.f64(v.energy_j);
  put(out, v.power_w);
  out.f64(v.share);
  out.text(v.method);
  put(out, v.notes);
}
void get(PartReader& in, MigEstimate& v) {
  v.energy_j = in.f64();
  get(in, v.power_w);
  v.share = in.f64();
  v.method = in.text();
  get(in, v.notes);
}

void put(PartWriter& out, const MigParentSplit& v) {
  out.u64(v.instances);
  out.f64(v.energy_j);
  out.f64(v.unattributed_j);
  put(out, v.unattributed_w);
  out.f64(v.idle_power_w);
  out.u8(v.idle_found ? 1 : 0);
}
void get(PartReader& in, MigParentSplit& v) {
  v.instances = in.u64();
  v.energy_j = in.f64();
  v.unattributed_j = in.f64();
  get(in, v.unattributed_w);
  v.idle_power_w = in.f64();
  v.idle_found = in.u8() != 0;
}

void put_report(PartWriter& out, const GpuReport& v) {
  out.f64(v.covered_s);
  put(out, v.over_time);
  put(out, v.activity);
  out.text(v.activity_metric);
  put(out, v.score);
  put(out, v.energy);
  out.u64(v.samples);
  put(out, v.grid);
  put(out, v.estimated);
  put(out, v.mig_split);
}
void get_report(PartReader& in, GpuReport& v) {
  v.covered_s = in.f64();
  get(in, v.over_time);
  get(in, v.activity);
  v.activity_metric = in.text();
  get(in, v.score);
  get(in, v.energy);
  v.samples = in.u64();
  get(in, v.grid);
  get(in, v.estimated);
  get(in, v.mig_split);
}

// A GPU's part of the over-both figures, without its sketch and counts (sent per task).
void put(PartWriter& out, const OverallPart& v) {
  out.u64(v.count);
  for (double x : {v.sum, v.compensation, v.min, v.max}) out.f64(x);
}
void get(PartReader& in, OverallPart& v) {
  v.count = in.u64();
  for (double* x : {&v.sum, &v.compensation, &v.min, &v.max}) *x = in.f64();
}

// A GPU's over-space means, in runs of consecutive bins (a GPU reports in nearly every bin of
// its span): each run's first bin and length, then its means; 8 bytes a bin instead of 16.
void put_space(PartWriter& out, const std::vector<std::pair<std::size_t, double>>& v) {
  out.u64(v.size());
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1].first == v[j].first + 1) ++j;
    out.u64(v[i].first);
    out.u64(j - i + 1);
    for (std::size_t k = i; k <= j; ++k) out.f64(v[k].second);
    i = j + 1;
  }
}
void get_space(PartReader& in, std::vector<std::pair<std::size_t, double>>& v) {
  v.resize(in.count(8));
  for (std::size_t i = 0; i < v.size();) {
    const std::uint64_t first = in.u64();
    const std::uint64_t length = in.u64();
    if (length == 0 || length > v.size() - i) in.damaged("a run of over-space bins overflows");
    for (std::uint64_t k = 0; k < length; ++k, ++i) v[i] = {first + k, in.f64()};
  }
}

void put(PartWriter& out, const PhaseGpuPart& v) {
  out.u64(v.spans.size());
  for (auto x : v.spans) out.u32(x);
  put(out, v.energy_j);
  put(out, v.exclusive_energy_j);
  put(out, v.integral);
  put(out, v.covered);
}
void get(PartReader& in, PhaseGpuPart& v) {
  v.spans.resize(in.count(4));
  for (auto& x : v.spans) x = in.u32();
  get(in, v.energy_j);
  get(in, v.exclusive_energy_j);
  get(in, v.integral);
  get(in, v.covered);
}

void put(PartWriter& out, const MigBins& v) {
  out.f64(v.bin_s);
  put(out, v.energy_j);
  put(out, v.covered_s);
  put(out, v.activity);
  out.u64(v.present.size());
  for (auto x : v.present) out.u8(x);
}
void get(PartReader& in, MigBins& v) {
  v.bin_s = in.f64();
  get(in, v.energy_j);
  get(in, v.covered_s);
  get(in, v.activity);
  v.present.resize(in.count(1));
  for (auto& x : v.present) x = in.u8();
}

}  // namespace

// The private state of the sketch and the counts, bit for bit.
struct StatsCodec {
  static void put(PartWriter& out, const QuantileSketch::Buckets& b) {
    // Without the empty buckets below the lowest count (the room the sketch keeps to grow
    // down): they count for nothing, so the part is the same whichever room there was.
    std::size_t first = 0;
    while (first < b.counts.size() && b.counts[first] == 0) ++first;
    out.i64(b.offset + static_cast<std::int64_t>(first));
    out.u64(b.counts.size() - first);
    for (std::size_t i = first; i < b.counts.size(); ++i) out.u64(b.counts[i]);
  }
  static void get(PartReader& in, QuantileSketch::Buckets& b) {
    b.offset = in.i64();
    b.counts.resize(in.count(8));
    for (auto& c : b.counts) c = in.u64();
  }
  static void put(PartWriter& out, const QuantileSketch& v) {
    for (double x : {v.gamma_, v.log_gamma_, v.min_, v.max_}) out.f64(x);
    out.u64(v.count_);
    out.u64(v.zeros_);
    put(out, v.positive_);
    put(out, v.negative_);
  }
  static void get(PartReader& in, QuantileSketch& v) {
    for (double* x : {&v.gamma_, &v.log_gamma_, &v.min_, &v.max_}) *x = in.f64();
    v.count_ = in.u64();
    v.zeros_ = in.u64();
    get(in, v.positive_);
    get(in, v.negative_);
  }
  static void put(PartWriter& out, const ValueCounts& v) {
    out.u64(v.limit_);
    out.u64(v.count_);
    out.u8(v.given_up_ ? 1 : 0);
    out.u64(v.counts_.size());
    for (const auto& [value, n] : v.counts_) {
      out.f64(value);
      out.u64(n);
    }
  }
  static void get(PartReader& in, ValueCounts& v) {
    v.limit_ = in.u64();
    v.count_ = in.u64();
    v.given_up_ = in.u8() != 0;
    v.counts_.resize(in.count(16));
    for (auto& [value, n] : v.counts_) {
      value = in.f64();
      n = in.u64();
    }
  }
};

void write_device(PartWriter& out, const PreparedDevice& d) {
  put_report(out, d.report);
  for (const auto& part : d.overall) put(out, part);
  put(out, d.score);
  for (const auto& space : d.space) put_space(out, space);
  put(out, d.phases);
  put(out, d.mig_bins);
}

PreparedDevice read_device(PartReader& in) {
  PreparedDevice d;
  get_report(in, d.report);
  for (auto& part : d.overall) get(in, part);
  get(in, d.score);
  for (auto& space : d.space) get_space(in, space);
  get(in, d.phases);
  get(in, d.mig_bins);
  return d;
}

void write_activity(PartWriter& out, const ActivityPart& part) {
  out.f64(part.width);
  out.f64(part.max_t_s);
  out.u64(part.max_gpu_samples);
  out.u64(part.sum.size());
  for (std::size_t i = 0; i < part.sum.size(); ++i) {
    const auto bits = static_cast<Bits128>(part.sum[i]);
    out.u64(static_cast<std::uint64_t>(bits));
    out.u64(static_cast<std::uint64_t>(bits >> 64));
    out.u32(part.count[i]);
  }
}

ActivityPart read_activity(PartReader& in) {
  ActivityPart part;
  part.width = in.f64();
  part.max_t_s = in.f64();
  part.max_gpu_samples = in.u64();
  const std::size_t n = in.count(20);
  part.sum.resize(n);
  part.count.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t low = in.u64();
    const std::uint64_t high = in.u64();
    part.sum[i] = static_cast<ActivitySum>((static_cast<Bits128>(high) << 64) | low);
    part.count[i] = in.u32();
  }
  return part;
}

void write_counts(PartWriter& out, const OverallCounts& counts) {
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    StatsCodec::put(out, counts.sketch[m]);
    StatsCodec::put(out, counts.values[m]);
  }
  StatsCodec::put(out, counts.score_sketch);
  StatsCodec::put(out, counts.score_values);
}

OverallCounts read_counts(PartReader& in) {
  OverallCounts counts;
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    StatsCodec::get(in, counts.sketch[m]);
    StatsCodec::get(in, counts.values[m]);
  }
  StatsCodec::get(in, counts.score_sketch);
  StatsCodec::get(in, counts.score_values);
  return counts;
}

}  // namespace gpuscope::analyze
