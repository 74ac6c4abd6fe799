#include "analyze/trimming.hpp"

#include <algorithm>
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

// Prefix sums of a series, for the squared error of any segment in constant time.
class Segments {
 public:
  explicit Segments(std::span<const double> values)
      : sum_(values.size() + 1, 0.0), sum_squares_(values.size() + 1, 0.0) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      sum_[i + 1] = sum_[i] + values[i];
      sum_squares_[i + 1] = sum_squares_[i] + values[i] * values[i];
    }
  }
  // Squared error of [begin, end) around its mean; 0 for an empty segment.
  double error(std::size_t begin, std::size_t end) const {
    if (end <= begin) return 0;
    const double s = sum_[end] - sum_[begin];
    return sum_squares_[end] - sum_squares_[begin] - s * s / static_cast<double>(end - begin);
  }
  double mean(std::size_t begin, std::size_t end) const {
    return (sum_[end] - sum_[begin]) / static_cast<double>(end - begin);
  }

 private:
  std::vector<double> sum_, sum_squares_;
};

// The least-squares split of `values` into an edge segment, a middle and an edge segment:
// [0, lead), [lead, trail), [trail, m). lead = 0 or trail = m means no such edge. Cuts are looked
// for up to `search` bins from their edge of the whole run (`position` holds each value's bin),
// on a grid of at most ~2000 candidates per edge, so that the fit stays quick on a day-long run.
struct Fit {
  std::size_t lead = 0;
  std::size_t trail = 0;
};

Fit fit_edges(const Segments& segments, std::span<const std::size_t> position, std::size_t n,
              std::size_t search) {
  const std::size_t m = position.size();
  const std::size_t step = std::max<std::size_t>(1, (m + 1999) / 2000);
  std::vector<std::size_t> leads{0}, trails{m};
  for (std::size_t a = step; a < m && position[a] <= search; a += step) leads.push_back(a);
  for (std::size_t c = step; c < m && n - 1 - position[m - 1 - c] <= search; c += step) {
    trails.push_back(m - c);
  }
  Fit best{.lead = 0, .trail = m};
  double best_error = segments.error(0, m);
  for (std::size_t a : leads) {
    for (std::size_t b : trails) {
      if (b <= a) continue;
      const double error = segments.error(0, a) + segments.error(a, b) + segments.error(b, m);
      if (error < best_error) {
        best_error = error;
        best = {.lead = a, .trail = b};
      }
    }
  }
  return best;
}

// Whether the fitted edge [0, cut) of `values` (ordered from the edge inwards, the middle
// segment ending at `middle_end`) is idle, and if so how many bins to cut: up to the crossing
// halfway between the edge's and the middle's mean. `distance[i]` is bin i's distance in bins
// from the edge of the whole run; nothing past `limit` is cut.
std::size_t place_edge(std::span<const double> values, std::span<const std::size_t> distance,
                       std::size_t limit, std::size_t cut, std::size_t middle_end) {
  if (cut == 0 || middle_end <= cut || distance[cut] > limit) return 0;
  const Segments segments(values);
  const double edge_mean = segments.mean(0, cut);
  const double middle_mean = segments.mean(cut, middle_end);
  if (!(edge_mean < kRelativeLevel * middle_mean &&
        middle_mean - edge_mean >= kMinimumDifference)) {
    return 0;
  }
  // The squared-error split of a ramp lands anywhere on it; cut where activity crosses halfway
  // between the two levels instead, the point a reader would pick on the plot.
  const double halfway = (edge_mean + middle_mean) / 2;
  if (values[cut] < halfway) {
    while (cut + 1 < middle_end && values[cut] < halfway && distance[cut + 1] <= limit) ++cut;
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

  // Both edges are fitted together (idle | job | idle), so that an idle tail cannot drag the
  // leading change point away from the real one, nor an idle start the trailing one.
  const Fit fit = fit_edges(Segments(values), position, n, search);
  if (mode == TrimMode::Leading || mode == TrimMode::All) {
    const std::size_t first = place_edge(values, position, limit, fit.lead, fit.trail);
    if (first > 0) result.begin = position[first];
  }
  if (mode == TrimMode::Trailing || mode == TrimMode::All) {
    // The mirror image: values from the end inwards.
    std::vector<double> reversed(values.rbegin(), values.rend());
    std::vector<std::size_t> distance;
    distance.reserve(m);
    for (std::size_t i = m; i-- > 0;) distance.push_back(n - 1 - position[i]);
    const std::size_t cut = place_edge(reversed, distance, limit, m - fit.trail, m - fit.lead);
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
