#include "tsdb/pieces.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace gpuscope::tsdb {

std::int64_t points_in(const Window& window, std::int64_t step_ms) {
  if (window.end_ms < window.start_ms || step_ms <= 0) return 0;
  return (window.end_ms - window.start_ms) / step_ms + 1;
}

std::vector<Window> split_range(const Window& window, std::int64_t step_ms,
                                std::int64_t max_points) {
  std::vector<Window> out;
  const std::int64_t total = points_in(window, step_ms);
  if (total == 0 || max_points <= 0) return out;
  for (std::int64_t first = 0; first < total; first += max_points) {
    const std::int64_t last = std::min(total, first + max_points) - 1;
    out.push_back(Window{window.start_ms + first * step_ms, window.start_ms + last * step_ms});
  }
  return out;
}

std::int64_t raw_piece_ms(std::size_t series_count, std::size_t target_samples,
                          std::int64_t assumed_interval_ms, std::int64_t window_ms) {
  const double per_series = static_cast<double>(std::max<std::size_t>(target_samples, 1)) /
                            static_cast<double>(std::max<std::size_t>(series_count, 1));
  const double piece =
      per_series * static_cast<double>(std::max<std::int64_t>(assumed_interval_ms, 1));
  const std::int64_t longest = std::max<std::int64_t>(window_ms + 1, 1000);
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::min(piece, 9e15)), 1000, longest);
}

std::int64_t next_raw_piece_ms(std::int64_t piece_ms, std::size_t samples,
                               std::size_t target_samples) {
  const double ratio =
      static_cast<double>(target_samples) / static_cast<double>(std::max<std::size_t>(samples, 1));
  const double factor = std::clamp(ratio, 0.25, 4.0);
  return std::max<std::int64_t>(1000,
                                static_cast<std::int64_t>(static_cast<double>(piece_ms) * factor));
}

SeriesJoiner::SeriesJoiner(std::size_t max_points, std::string what_for_errors)
    : max_points_(max_points), what_(std::move(what_for_errors)) {}

void SeriesJoiner::over() const {
  throw Error(fmt::format("more than {} samples would come back for {}", max_points_, what_),
              "the limit of one read, which keeps gpuscope's memory bounded (a series without "
              "samples counts as one)",
              "ask for a shorter window or fewer series (a narrower selector)");
}

void SeriesJoiner::add(Series series, std::int64_t from_ms) {
  auto [it, fresh] = index_.try_emplace(series.labels, series_.size());
  if (fresh) series_.push_back(Series{std::move(series.labels), {}});
  auto& points = series_[it->second].points;
  for (const Point& p : series.points) {
    if (p.t_ms < from_ms) continue;
    if (!points.empty() && p.t_ms == points.back().t_ms) continue;
    if (++points_ + empty_ > max_points_) over();
    points.push_back(p);
  }
  // Its labels are held all the same: a million series without samples are not free.
  if (fresh && points.empty() && points_ + ++empty_ > max_points_) over();
}

std::vector<Series> SeriesJoiner::take() {
  for (auto& s : series_) {
    auto& p = s.points;
    const auto by_time = [](const Point& a, const Point& b) { return a.t_ms < b.t_ms; };
    if (!std::is_sorted(p.begin(), p.end(), by_time)) {
      std::stable_sort(p.begin(), p.end(), by_time);
      p.erase(std::unique(p.begin(), p.end(),
                          [](const Point& a, const Point& b) { return a.t_ms == b.t_ms; }),
              p.end());
    }
  }
  index_.clear();
  points_ = 0;
  empty_ = 0;
  return std::move(series_);
}

}  // namespace gpuscope::tsdb
