#include "analyze/trimming.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"

namespace gpuscope::analyze {

namespace {

// Thresholds of the method (docs/analysis.md explains each).
constexpr std::size_t kMinBins = 5;          // fewer reporting bins: too little to split
constexpr double kEdgeFraction = 0.3;        // an idle edge lies within the first/last 30 %
constexpr double kSearchFraction = 0.5;      // where its change point is looked for
constexpr double kRelativeLevel = 0.5;       // edge mean below half the rest's mean ...
constexpr double kMinimumDifference = 0.15;  // ... and at least this much lower

// How many of `values` (activity of the reporting bins, ordered from the edge inwards) form an
// idle edge segment, 0 for none. `distance[i]` is bin i's distance in bins from the edge of the
// whole run (NaN bins included). The change point is looked for up to `search` bins in, so
// that an idle segment at the far edge does not pull it there, and accepted up to `limit`.
std::size_t idle_edge(std::span<const double> values, std::span<const std::size_t> distance,
                      std::size_t limit, std::size_t search) {
  const std::size_t m = values.size();
  if (m < 2) return 0;
  std::vector<double> sum(m + 1, 0.0), sum_squares(m + 1, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    sum[i + 1] = sum[i] + values[i];
    sum_squares[i + 1] = sum_squares[i] + values[i] * values[i];
  }
  const auto squared_error = [&](std::size_t begin, std::size_t end) {
    const double s = sum[end] - sum[begin];
    return sum_squares[end] - sum_squares[begin] - s * s / static_cast<double>(end - begin);
  };

  // The single change point within the edge window that best splits the series in two levels.
  std::size_t best = 0;
  double best_error = std::numeric_limits<double>::infinity();
  for (std::size_t cut = 1; cut < m && distance[cut] <= search; ++cut) {
    const double error = squared_error(0, cut) + squared_error(cut, m);
    if (error < best_error) {
      best_error = error;
      best = cut;
    }
  }
  if (best == 0 || distance[best] > limit) return 0;

  const double edge_mean = sum[best] / static_cast<double>(best);
  const double rest_mean = (sum[m] - sum[best]) / static_cast<double>(m - best);
  if (!(edge_mean < kRelativeLevel * rest_mean && rest_mean - edge_mean >= kMinimumDifference)) {
    return 0;
  }

  // The squared-error split of a ramp lands anywhere on it; cut where activity crosses halfway
  // between the two levels instead, the point a reader would pick on the plot.
  const double halfway = (edge_mean + rest_mean) / 2;
  std::size_t cut = best;
  if (values[cut] < halfway) {
    while (cut + 1 < m && values[cut] < halfway && distance[cut + 1] <= limit) ++cut;
  } else {
    while (cut > 1 && values[cut - 1] >= halfway) --cut;
  }
  return cut;
}

}  // namespace

TrimResult detect_idle(std::span<const double> activity, double bin_s, TrimMode mode) {
  const std::size_t n = activity.size();
  TrimResult result{.begin = 0, .end = n, .leading_s = 0, .trailing_s = 0};
  if (mode == TrimMode::None) return result;

  // Bins where no GPU reported say nothing about activity: the method runs on the others.
  std::vector<double> values;
  std::vector<std::size_t> position;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(activity[i])) continue;
    values.push_back(activity[i]);
    position.push_back(i);
  }
  const std::size_t m = values.size();
  if (m < kMinBins) return result;
  const auto limit = static_cast<std::size_t>(kEdgeFraction * static_cast<double>(n));
  const auto search = static_cast<std::size_t>(kSearchFraction * static_cast<double>(n));

  std::size_t first = 0;  // first kept reporting bin
  if (mode == TrimMode::Leading || mode == TrimMode::All) {
    first = idle_edge(values, position, limit, search);
    if (first > 0) result.begin = position[first];
  }
  if (mode == TrimMode::Trailing || mode == TrimMode::All) {
    // The same from the other end, over what the leading cut kept.
    std::vector<double> reversed(values.rbegin(),
                                 values.rend() - static_cast<std::ptrdiff_t>(first));
    std::vector<std::size_t> distance;
    distance.reserve(reversed.size());
    for (std::size_t i = m; i-- > first;) distance.push_back(n - 1 - position[i]);
    const std::size_t cut = idle_edge(reversed, distance, limit, search);
    if (cut > 0) result.end = position[m - 1 - cut] + 1;
  }
  result.leading_s = static_cast<double>(result.begin) * bin_s;
  result.trailing_s = static_cast<double>(n - result.end) * bin_s;
  return result;
}

TrimMode parse_trim_mode(const std::string& text) {
  if (text == "leading") return TrimMode::Leading;
  if (text == "trailing") return TrimMode::Trailing;
  if (text == "all") return TrimMode::All;
  if (text == "none") return TrimMode::None;
  throw Error::usage("unknown trim mode '" + text + "'",
                     "the choices are leading, trailing, all and none",
                     "leading cuts an idle warm-up, trailing an idle tail, all both, none nothing");
}

}  // namespace gpuscope::analyze
