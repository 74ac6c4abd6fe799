// How a long query is cut into pieces a server accepts and how the pieces' series are joined:
// pure arithmetic, tested by hand (docs/jobs.md, "Servers, credentials and limits").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tsdb/series.hpp"

namespace gpuscope::tsdb {

// Prometheus refuses a range query of more than 11,000 steps per series; VictoriaMetrics more
// than -search.maxPointsPerTimeseries (30,000 by default) points.
constexpr std::int64_t kPrometheusMaxPointsPerSeries = 11'000;
constexpr std::int64_t kVictoriaMetricsMaxPointsPerSeries = 30'000;

// The evaluation times start, start + step, ... up to end cut into consecutive windows of at most
// `max_points` evaluation times each (every window's start and end are evaluation times; no time
// is in two windows). Empty when end < start; step_ms and max_points must be positive.
std::vector<Window> split_range(const Window& window, std::int64_t step_ms,
                                std::int64_t max_points);

// The number of evaluation times of `window` at `step_ms`.
std::int64_t points_in(const Window& window, std::int64_t step_ms);

// How long a piece of a raw read (Prometheus: one instant query of `selector[piece]`) may be so
// that about `target_samples` come back for `series_count` series sampled every
// `assumed_interval_ms` at most; at least 1 s, at most the window.
std::int64_t raw_piece_ms(std::size_t series_count, std::size_t target_samples,
                          std::int64_t assumed_interval_ms, std::int64_t window_ms);

// The next piece's length after one of `piece_ms` brought `samples` back: grown (at most 4×) when
// far under `target_samples`, shrunk when over, never under 1 s.
std::int64_t next_raw_piece_ms(std::int64_t piece_ms, std::size_t samples,
                               std::size_t target_samples);

// Series from several answers joined by their label sets: points appended in time order, a
// point at a time already held (the boundary of two pieces) dropped; counts what it holds (a
// series first seen without samples as one) and throws Error once more than `max_points` would
// be held.
class SeriesJoiner {
 public:
  explicit SeriesJoiner(std::size_t max_points, std::string what_for_errors);

  // Adds the points of `series` from `from_ms` on (earlier ones are the previous piece's).
  void add(Series series, std::int64_t from_ms = INT64_MIN);
  std::size_t points() const { return points_; }
  // The series, in the order first seen, each sorted by time with no two points at one time.
  std::vector<Series> take();

 private:
  [[noreturn]] void over() const;
  std::size_t max_points_;
  std::string what_;
  std::size_t points_ = 0;
  std::size_t empty_ = 0;  // series first seen without samples
  std::map<Labels, std::size_t> index_;
  std::vector<Series> series_;
};

}  // namespace gpuscope::tsdb
