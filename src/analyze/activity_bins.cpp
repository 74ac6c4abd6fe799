#include "analyze/activity_bins.hpp"

#include <limits>

namespace gpuscope::analyze {

void BinnedMean::merge(BinnedMean other) {
  while (width < other.width) coarsen();
  while (other.width < width) other.coarsen();
  grow(other.sum.size());
  for (std::size_t i = 0; i < other.sum.size(); ++i) {
    sum[i] += other.sum[i];
    count[i] += other.count[i];
  }
}

void BinnedMean::coarsen() {
  const std::size_t n = (sum.size() + 1) / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t a = 2 * i, b = 2 * i + 1;
    sum[i] = sum[a] + (b < sum.size() ? sum[b] : 0);
    count[i] = count[a] + (b < count.size() ? count[b] : 0U);
  }
  sum.resize(n);
  count.resize(n);
  width *= 2;
}

std::vector<double> BinnedMean::means() const {
  std::vector<double> out(sum.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < sum.size(); ++i) {
    if (count[i] > 0) out[i] = ActivityPart::value(sum[i]) / count[i];
  }
  return out;
}

}  // namespace gpuscope::analyze
