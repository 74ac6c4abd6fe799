// The quantiles over all GPUs and time (stats.hpp): exact counts of a stream's distinct values
// (ValueCounts) while there are few, and the bounded-memory QuantileSketch beside them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "analyze/stats.hpp"

namespace gpuscope::analyze {

namespace {

constexpr double kDefaultAccuracy = 0.001;
// Below 1e-6 the bucket index of DBL_MAX approaches the limits of exact double arithmetic on
// indices; above 0.5 the buckets are too coarse to mean anything.
constexpr double kMinAccuracy = 1e-6, kMaxAccuracy = 0.5;

}  // namespace

void ValueCounts::give_up() {
  given_up_ = true;
  counts_.clear();
  counts_.shrink_to_fit();
}

void ValueCounts::add_sorted(std::span<const double> sorted) {
  if (sorted.empty()) return;
  if (given_up_) {
    count_ += sorted.size();
    return;
  }
  // More runs of equal values than the limit (noisy values): given up without building them.
  std::size_t runs = 1;
  for (std::size_t i = 1; i < sorted.size() && runs <= limit_; ++i) {
    runs += sorted[i] != sorted[i - 1] ? 1U : 0U;
  }
  if (runs > limit_) {
    count_ += sorted.size();
    give_up();
    return;
  }
  // The runs of equal values, in order (x + 0.0 makes −0 and +0 one value).
  ValueCounts part(limit_);
  part.count_ = sorted.size();
  for (std::size_t i = 0; i < sorted.size() && !part.given_up_;) {
    std::size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    part.counts_.emplace_back(sorted[i] + 0.0, j - i);
    if (part.counts_.size() > limit_) part.give_up();
    i = j;
  }
  if (counts_.empty() && count_ == 0) {
    *this = std::move(part);
    return;
  }
  merge(part);
}

void ValueCounts::merge(const ValueCounts& other) {
  count_ += other.count_;
  if (given_up_) return;
  if (other.given_up_) return give_up();
  if (other.counts_.empty()) return;
  std::vector<std::pair<double, std::uint64_t>> merged;
  merged.reserve(std::min(counts_.size() + other.counts_.size(), limit_ + 1));
  auto a = counts_.begin();
  auto b = other.counts_.begin();
  while (a != counts_.end() || b != other.counts_.end()) {
    if (b == other.counts_.end() || (a != counts_.end() && a->first < b->first)) {
      merged.push_back(*a++);
    } else if (a == counts_.end() || b->first < a->first) {
      merged.push_back(*b++);
    } else {
      merged.emplace_back(a->first, a->second + b->second);
      ++a;
      ++b;
    }
    if (merged.size() > limit_) return give_up();
  }
  counts_ = std::move(merged);
}

std::optional<double> ValueCounts::quantile(double q) const {
  if (given_up_ || count_ == 0 || std::isnan(q)) return std::nullopt;
  q = std::clamp(q, 0.0, 1.0);
  // The same position and interpolation as quantile_sorted() over the expanded values.
  const double position = q * static_cast<double>(count_ - 1);
  const auto lower = static_cast<std::uint64_t>(position);
  const double fraction = position - static_cast<double>(lower);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i].second;
    if (lower < seen) {
      const double a = counts_[i].first;
      if (lower + 1 >= count_) return a;
      const double b = lower + 1 < seen ? a : counts_[i + 1].first;
      return a + fraction * (b - a);
    }
  }
  return counts_.back().first;
}

QuantileSketch::QuantileSketch(double relative_accuracy) {
  const double accuracy = std::isnan(relative_accuracy)
                              ? kDefaultAccuracy
                              : std::clamp(relative_accuracy, kMinAccuracy, kMaxAccuracy);
  gamma_ = (1 + accuracy) / (1 - accuracy);
  log_gamma_ = std::log1p(2 * accuracy / (1 - accuracy));
}

double QuantileSketch::relative_accuracy() const {
  return (gamma_ - 1) / (gamma_ + 1);
}

std::int64_t QuantileSketch::index_of(double magnitude) const {
  return static_cast<std::int64_t>(std::ceil(std::log(magnitude) / log_gamma_));
}

double QuantileSketch::value_of(std::int64_t index) const {
  // The point within relative error a of both ends of (γ^(k−1), γ^k].
  return 2 * std::exp(static_cast<double>(index) * log_gamma_) / (gamma_ + 1);
}

void QuantileSketch::Buckets::add(std::int64_t index, std::uint64_t n) {
  constexpr auto kMax = static_cast<std::int64_t>(kMaxBuckets);
  if (counts.empty()) {
    offset = index;
    counts.push_back(n);
    return;
  }
  const auto size = static_cast<std::int64_t>(counts.size());
  const std::int64_t top = offset + size - 1;
  if (index < offset) {
    // Too small to keep within the cap: counted in the lowest kept bucket.
    index = std::max(index, top - kMax + 1);
    if (index < offset) {
      // Room below as well: as much as is held, up to 1024 buckets (8 KB), never past the cap.
      const std::int64_t room = std::min<std::int64_t>(size, 1024);
      const std::int64_t lowest = std::max(top - kMax + 1, std::min(index, offset - room));
      counts.insert(counts.begin(), static_cast<std::size_t>(offset - lowest), 0);
      offset = lowest;
    }
  } else if (index > top) {
    // Growing upwards past the cap: fold the smallest magnitudes into the new lowest bucket.
    const std::int64_t new_offset = std::max(offset, index - kMax + 1);
    if (new_offset > offset) {
      const auto drop = static_cast<std::size_t>(std::min(new_offset - offset, size));
      std::uint64_t folded = 0;
      for (std::size_t i = 0; i < drop; ++i) folded += counts[i];
      counts.erase(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(drop));
      offset = new_offset;
      if (folded > 0) {
        if (counts.empty()) counts.push_back(0);
        counts.front() += folded;
      }
    }
    counts.resize(static_cast<std::size_t>(index - offset + 1), 0);
  }
  counts[static_cast<std::size_t>(index - offset)] += n;
}

void QuantileSketch::compact() {
  positive_.compact();
  negative_.compact();
}

void QuantileSketch::add_count(double value, std::uint64_t n) {
  if (value == 0) {
    zeros_ += n;
  } else if (value > 0) {
    positive_.add(index_of(value), n);
  } else {
    negative_.add(index_of(-value), n);
  }
  count_ += n;
}

void QuantileSketch::add(double value) {
  if (std::isnan(value)) return;
  value =
      std::clamp(value, std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  add_count(value, 1);
}

std::pair<int, std::int64_t> QuantileSketch::bucket_of(double value) const {
  // As add() files it: ±inf as ±DBL_MAX.
  const double v =
      std::clamp(value, std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
  if (v == 0) return {0, 0};
  return v > 0 ? std::pair{1, index_of(v)} : std::pair{-1, index_of(-v)};
}

void QuantileSketch::add_sorted(std::span<const double> sorted) {
  const std::size_t n = sorted.size();
  if (n == 0) return;
  constexpr double kLowest = std::numeric_limits<double>::lowest();
  constexpr double kHighest = std::numeric_limits<double>::max();
  auto at = [&](std::size_t i) { return std::clamp(sorted[i], kLowest, kHighest); };
  const double low = at(0), high = at(n - 1);
  if (count_ == 0) {
    min_ = low;
    max_ = high;
  } else {
    min_ = std::min(min_, low);
    max_ = std::max(max_, high);
  }
  auto key = [&](std::size_t i) { return bucket_of(sorted[i]); };
  // The bucket of the value that ended the previous run, found while looking for that end: on
  // noisy values, where most runs hold one value, it halves the indices computed.
  std::pair<int, std::int64_t> next_key{};
  std::size_t i = 0;
  while (i < n) {
    const auto k = i == 0 ? key(0) : next_key;
    // Gallop to a value of another bucket, then bisect back to the end of this one.
    std::size_t same = i, step = 1;
    while (same + step < n) {
      next_key = key(same + step);
      if (next_key != k) break;
      same += step;
      step *= 2;
    }
    std::size_t other = std::min(same + step, n);
    while (other - same > 1) {
      const std::size_t middle = same + (other - same) / 2;
      const auto middle_key = key(middle);
      if (middle_key == k) {
        same = middle;
      } else {
        other = middle;
        next_key = middle_key;
      }
    }
    const auto run = static_cast<std::uint64_t>(other - i);
    if (k.first == 0) {
      zeros_ += run;
    } else {
      (k.first > 0 ? positive_ : negative_).add(k.second, run);
    }
    count_ += run;
    i = other;
  }
}

void QuantileSketch::merge(const QuantileSketch& other) {
  if (other.count_ == 0) return;
  if (&other == this) {
    const QuantileSketch copy = other;
    merge(copy);
    return;
  }
  const double other_min = other.min_, other_max = other.max_;
  if (other.gamma_ == gamma_) {
    for (std::size_t i = 0; i < other.positive_.counts.size(); ++i) {
      if (other.positive_.counts[i] == 0) continue;
      positive_.add(other.positive_.offset + static_cast<std::int64_t>(i),
                    other.positive_.counts[i]);
    }
    for (std::size_t i = 0; i < other.negative_.counts.size(); ++i) {
      if (other.negative_.counts[i] == 0) continue;
      negative_.add(other.negative_.offset + static_cast<std::int64_t>(i),
                    other.negative_.counts[i]);
    }
    zeros_ += other.zeros_;
    count_ += other.count_;
  } else {
    for (std::size_t i = 0; i < other.positive_.counts.size(); ++i) {
      if (other.positive_.counts[i] == 0) continue;
      const double value = other.value_of(other.positive_.offset + static_cast<std::int64_t>(i));
      add_count(std::clamp(value, other_min, other_max), other.positive_.counts[i]);
    }
    for (std::size_t i = 0; i < other.negative_.counts.size(); ++i) {
      if (other.negative_.counts[i] == 0) continue;
      const double value = -other.value_of(other.negative_.offset + static_cast<std::int64_t>(i));
      add_count(std::clamp(value, other_min, other_max), other.negative_.counts[i]);
    }
    if (other.zeros_ > 0) add_count(0, other.zeros_);
  }
  const bool was_empty = count_ == other.count_;
  min_ = was_empty ? other_min : std::min(min_, other_min);
  max_ = was_empty ? other_max : std::max(max_, other_max);
}

double QuantileSketch::value_at_rank(std::uint64_t rank) const {
  if (rank == 0) return min_;
  if (rank + 1 >= count_) return max_;
  // Ascending order: negatives from the largest magnitude down, zeros, positives upwards.
  std::uint64_t seen = 0;
  double value = max_;
  bool found = false;
  for (std::size_t i = negative_.counts.size(); i-- > 0 && !found;) {
    seen += negative_.counts[i];
    if (seen > rank) {
      value = -value_of(negative_.offset + static_cast<std::int64_t>(i));
      found = true;
    }
  }
  if (!found) {
    seen += zeros_;
    if (seen > rank) {
      value = 0;
      found = true;
    }
  }
  for (std::size_t i = 0; i < positive_.counts.size() && !found; ++i) {
    seen += positive_.counts[i];
    if (seen > rank) {
      value = value_of(positive_.offset + static_cast<std::int64_t>(i));
      found = true;
    }
  }
  // The exact extremes can only bring a representative closer to the values it stands for.
  return std::clamp(value, min_, max_);
}

std::optional<double> QuantileSketch::quantile(double q) const {
  if (count_ == 0 || std::isnan(q)) return std::nullopt;
  q = std::clamp(q, 0.0, 1.0);
  const double position = q * static_cast<double>(count_ - 1);
  const auto lower = static_cast<std::uint64_t>(position);
  const double fraction = position - static_cast<double>(lower);
  const double low_value = value_at_rank(lower);
  if (fraction == 0 || lower + 1 >= count_) return low_value;
  const double high_value = value_at_rank(lower + 1);
  return low_value + fraction * (high_value - low_value);
}

}  // namespace gpuscope::analyze
