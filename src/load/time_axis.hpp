// Where a run's samples land on the analysis' time axis (docs/analysis.md, "Time axis"): the
// axis is wall-clock time since the earliest run start, so that runs on several hosts line up;
// within a run, time is the monotonic clock since the run's start, so a stepped wall clock does
// not stretch it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpuscope::load {

// Differences of two int64 nanosecond stamps from a file cannot overflow in 128 bits.
__extension__ typedef __int128 WideInt;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Where a run's timestamps land on the analysis' time axis (docs/analysis.md, "Time axis").
// The axis is wall-clock time since the earliest run start, so that runs on several hosts line
// up; within a run, though, time is the monotonic clock since the run's start. CLOCK_REALTIME
// steps (NTP, a VM migration, an operator's date command) and one stepped wall_ns would stretch
// the axis by the step, a year of empty time for a one-hour run; mono_ns never steps. A
// timestamp outside the run's own monotonic span cannot be one of its samples (a corrupted or
// edited file): it is left out and reported.
struct RunClock {
  static constexpr std::int64_t kSlackNs = 2'000'000'000;  // around the run's start and end
  double offset_s = 0;                                     // the run's start on the axis
  std::int64_t start_wall_ns = 0;
  std::int64_t start_mono_ns = 0;
  std::optional<std::int64_t> end_mono_ns;  // when the run recorded its end

  // Seconds on the axis of a timestamp taken at mono_ns; NaN when outside the run.
  double at(std::int64_t mono_ns) const {
    // In 64 bits when the differences fit (every real file: a double of the same integer is
    // the same double), in 128 bits otherwise; the 64-bit path spares a slow 128-bit
    // conversion per sample.
    std::int64_t since = 0, past_end = 0;
    if (__builtin_sub_overflow(mono_ns, start_mono_ns, &since) ||
        (end_mono_ns && __builtin_sub_overflow(mono_ns, *end_mono_ns, &past_end))) {
      return at_wide(mono_ns);
    }
    if (since < -kSlackNs) return kNaN;
    if (end_mono_ns && past_end > kSlackNs) return kNaN;
    return offset_s + static_cast<double>(since) / 1e9;
  }
  // How far the wall clock had stepped (s, signed) at a sample, against where it stood at start.
  double step_s(std::int64_t wall_ns, std::int64_t mono_ns) const {
    std::int64_t now = 0, start = 0, step = 0;
    if (__builtin_sub_overflow(wall_ns, mono_ns, &now) ||
        __builtin_sub_overflow(start_wall_ns, start_mono_ns, &start) ||
        __builtin_sub_overflow(now, start, &step)) {
      const WideInt wide_now = static_cast<WideInt>(wall_ns) - mono_ns;
      const WideInt wide_start = static_cast<WideInt>(start_wall_ns) - start_mono_ns;
      return static_cast<double>(wide_now - wide_start) / 1e9;
    }
    return static_cast<double>(step) / 1e9;
  }

 private:
  double at_wide(std::int64_t mono_ns) const {
    const WideInt since = static_cast<WideInt>(mono_ns) - start_mono_ns;
    if (since < -kSlackNs) return kNaN;
    if (end_mono_ns && static_cast<WideInt>(mono_ns) - *end_mono_ns > kSlackNs) return kNaN;
    return offset_s + static_cast<double>(since) / 1e9;
  }
};

// What placing one GPU's samples on the axis found.
struct TimeCheck {
  std::size_t rows = 0;
  std::size_t outside = 0;  // mono_ns outside the run: left out
  bool by_wall = false;     // every sample was outside: placed by wall clock instead
  std::size_t stepped = 0;  // samples whose wall clock had stepped
  double largest_step_s = 0;
  double first_step_at_s = kNaN;  // seconds into the run of the first stepped sample

  void merge(const TimeCheck& o) {
    rows += o.rows;
    outside += o.outside;
    by_wall = by_wall || o.by_wall;
    stepped += o.stepped;
    if (std::fabs(o.largest_step_s) > std::fabs(largest_step_s)) largest_step_s = o.largest_step_s;
    if (!std::isnan(o.first_step_at_s) &&
        (std::isnan(first_step_at_s) || o.first_step_at_s < first_step_at_s)) {
      first_step_at_s = o.first_step_at_s;
    }
  }
};

// Each sample's seconds on the axis into `t` (NaN: left out), and what was odd about them. A
// step is a change of wall − mono by more than 1 s plus 0.1 % of the time since the start, more
// than NTP's slewing (at most 0.05 %) can account for. Deterministic, so both passes agree.
TimeCheck place_samples(const RunClock& clock, std::span<const std::int64_t> wall,
                        std::span<const std::int64_t> mono, std::int64_t t0,
                        std::vector<double>& t);

// Drops the rows whose time is NaN from `t` and every non-empty column of `values`.
template <typename Columns>
void drop_unplaced(std::vector<double>& t, Columns& values) {
  std::size_t kept = 0;
  while (kept < t.size() && !std::isnan(t[kept])) ++kept;  // usually every row: nothing to move
  for (std::size_t i = kept; i < t.size(); ++i) {
    if (std::isnan(t[i])) continue;
    for (auto& v : values) {
      if (i < v.size()) v[kept] = v[i];
    }
    t[kept++] = t[i];
  }
  if (kept == t.size()) return;
  t.resize(kept);
  for (auto& v : values) {
    if (!v.empty()) v.resize(kept);
  }
}

// "+3.2 days", "-1.5 h", "+42.0 s": a clock step for people.
std::string duration_text(double seconds);

}  // namespace gpuscope::load
