#include "ingest/logs/log_ticks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ingest/logs/log_run.hpp"

namespace gpuscope::ingest {
namespace {

constexpr double kFits = 0.9;          // the share of ticks that must fit a count
constexpr unsigned kMostGpus = 64;     // the largest count tried
constexpr double kLevelRepeat = 0.25;  // levels k rows apart this close, against row to row
constexpr unsigned kShifted = 8;       // straddling ticks in a row that mean the rows have shifted
constexpr double kApart = 0.75;        // the share of ticks that must stand apart from their gaps

// The median of `values` (not empty), which it reorders.
std::int64_t median(std::vector<std::int64_t> values) {
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

// The share of `values` within `within` (a fraction) of their median (0 for none).
double regular_share(const std::vector<std::int64_t>& values, double within) {
  if (values.empty()) return 0;
  const double m = static_cast<double>(median(values));
  std::size_t near = 0;
  for (auto v : values) near += std::abs(static_cast<double>(v) - m) <= within * m ? 1U : 0U;
  return static_cast<double>(near) / static_cast<double>(values.size());
}

// How well ticks of `gpus` rows, the first row at place `first`, fit the times `t`.
struct Fit {
  double separated = 0;  // share of ticks whose rows are closer than the gaps around them
  double regular = 0;    // share of ticks recurring at the usual period (or gap)
  std::size_t ticks = 0;
  std::int64_t period_ns = 0;
  // The ticks before the first run of kShifted ticks that straddle the gaps around them (a
  // row missing or extra shifts every tick after it), the share of them apart, and the row
  // that run begins at (0: none).
  std::size_t prefix_ticks = 0;
  double prefix_separated = 0;
  std::size_t shift_row = 0;
  double contrast = 0;  // the median gap between ticks over the median widest inner gap
  // Nearly every tick stands apart, recurs, and no run of ticks straddles (a log shifted
  // inside the rows looked at fits no count clearly).
  bool clear() const {
    return ticks >= 3 && separated >= kApart && regular >= kFits && contrast >= 1.5 &&
           shift_row == 0;
  }
  bool clear_prefix() const {
    return prefix_ticks >= 3 && prefix_separated >= kApart && contrast >= 1.5;
  }
};

Fit fit_of(std::span<const std::int64_t> t, unsigned gpus, unsigned first) {
  Fit fit;
  std::vector<std::int64_t> starts, between, inners;
  std::vector<std::size_t> starts_row;
  std::size_t seen = 0, apart = 0, run = 0, run_row = 0, prefix_apart = 0;
  for (std::size_t s = (gpus - first) % gpus; s + gpus <= t.size(); s += gpus) {
    std::int64_t inner = 0;
    for (std::size_t i = s + 1; i < s + gpus; ++i) inner = std::max(inner, t[i] - t[i - 1]);
    const std::int64_t before = s > 0 ? t[s] - t[s - 1] : -1;
    const std::int64_t after = s + gpus < t.size() ? t[s + gpus] - t[s + gpus - 1] : -1;
    starts.push_back(t[s]);
    starts_row.push_back(s);
    inners.push_back(inner);
    if (before >= 0) between.push_back(before);
    if (before < 0 && after < 0) continue;
    ++seen;
    const bool ok = (before < 0 || inner < before) && (after < 0 || inner < after);
    apart += ok ? 1U : 0U;
    if (fit.shift_row != 0) continue;
    run = ok ? 0 : run + 1;
    if (run == 1) run_row = s;
    if (run >= kShifted && gpus > 1) {
      fit.shift_row = run_row;
      fit.prefix_ticks = seen - run;
      continue;
    }
    prefix_apart += ok ? 1U : 0U;
  }
  if (fit.shift_row == 0 && run >= 3 && gpus > 1) {  // the rows looked at end shifted
    fit.shift_row = run_row;
    fit.prefix_ticks = seen - run;
  }
  if (fit.shift_row == 0) fit.prefix_ticks = seen;
  fit.prefix_separated = fit.prefix_ticks == 0
                             ? 0
                             : static_cast<double>(std::min(prefix_apart, fit.prefix_ticks)) /
                                   static_cast<double>(fit.prefix_ticks);
  fit.ticks = starts.size();
  std::vector<std::int64_t> periods;
  for (std::size_t i = 1; i < starts.size(); ++i) periods.push_back(starts[i] - starts[i - 1]);
  fit.separated = seen == 0 ? 0 : static_cast<double>(apart) / static_cast<double>(seen);
  fit.regular = std::max(regular_share(periods, 0.1), regular_share(between, 0.1));
  fit.period_ns = periods.empty() ? 0 : median(periods);
  // Over the ticks before a shift: after it, the gaps swap their parts.
  const std::size_t kept = std::min(inners.size(), fit.prefix_ticks + 1);
  std::vector<std::int64_t> kept_between,
      kept_inners(inners.begin(), inners.begin() + static_cast<std::ptrdiff_t>(kept));
  for (std::size_t i = 1; i < kept; ++i) kept_between.push_back(starts[i] - t[starts_row[i] - 1]);
  if (!kept_between.empty()) {
    fit.contrast = static_cast<double>(median(kept_between)) /
                   static_cast<double>(std::max<std::int64_t>(median(kept_inners), 500'000));
  }
  return fit;
}

// The best place of the first row for ticks of `gpus` rows (by separation), and its fit.
std::pair<unsigned, Fit> best_fit(std::span<const std::int64_t> t, unsigned gpus) {
  std::pair<unsigned, Fit> best{0, fit_of(t, gpus, 0)};
  for (unsigned first = 1; first < gpus; ++first) {
    const Fit f = fit_of(t, gpus, first);
    if (f.separated > best.second.separated) best = {first, f};
  }
  return best;
}

// One row per tick: the gaps recur regularly, and hardly any is far longer than the rest (a
// tick's last row to the next tick's first, among rows a few ms apart).
bool one_per_tick(std::span<const std::int64_t> t) {
  if (t.size() < 4) return false;
  std::vector<std::int64_t> gaps;
  for (std::size_t i = 1; i < t.size(); ++i) gaps.push_back(t[i] - t[i - 1]);
  const std::int64_t m = median(gaps);
  std::size_t far = 0;
  for (auto g : gaps) far += g > 3 * std::max<std::int64_t>(m, 1'000'000) ? 1U : 0U;
  return regular_share(gaps, 0.4) >= kFits && far * 100 <= gaps.size();
}

bool facts_agree(const TickRow& a, const TickRow& b) {
  for (std::size_t i = 0; i < a.facts.size() && i < b.facts.size(); ++i) {
    if (!a.facts[i].empty() && !b.facts[i].empty() && a.facts[i] != b.facts[i]) return false;
  }
  return true;
}

// The rows' fixed facts disagree k rows apart: the first pair that does, else nullopt.
std::optional<std::size_t> facts_differ_at(std::span<const TickRow> rows, unsigned k) {
  for (std::size_t i = 0; i + k < rows.size(); ++i) {
    if (!facts_agree(rows[i], rows[i + k])) return i;
  }
  return std::nullopt;
}

// The smallest k ≥ 2 at which every level that changes from row to row (by at least 1, the
// caller's unit of a telling difference) repeats k rows apart; 0 where none does.
unsigned level_period(std::span<const TickRow> rows, unsigned most) {
  const std::size_t columns = rows.empty() ? 0 : rows.front().levels.size();
  const auto mean_step = [&](std::size_t c, unsigned k) {
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i + k < rows.size(); ++i) {
      const double a = rows[i].levels[c], b = rows[i + k].levels[c];
      if (std::isfinite(a) && std::isfinite(b)) {
        sum += std::abs(a - b);
        ++n;
      }
    }
    return n < 4 ? std::nan("") : sum / static_cast<double>(n);
  };
  std::vector<std::pair<std::size_t, double>> telling;  // column, mean row-to-row step
  for (std::size_t c = 0; c < columns; ++c) {
    const double step = mean_step(c, 1);
    if (std::isfinite(step) && step >= 1) telling.emplace_back(c, step);
  }
  if (telling.empty()) return 0;
  for (unsigned k = 2; k <= most; ++k) {
    const bool repeats = std::all_of(telling.begin(), telling.end(), [&](const auto& ct) {
      const double step = mean_step(ct.first, k);
      return std::isfinite(step) && step <= kLevelRepeat * ct.second;
    });
    if (repeats) return k;
  }
  return 0;
}

std::string gaps_text(std::span<const std::int64_t> t) {
  std::vector<std::int64_t> gaps;
  for (std::size_t i = 1; i < t.size(); ++i) gaps.push_back(t[i] - t[i - 1]);
  std::sort(gaps.begin(), gaps.end());
  const auto at = [&](double q) {
    return interval_text(gaps[static_cast<std::size_t>(q * static_cast<double>(gaps.size() - 1))]);
  };
  return fmt::format("gaps between rows {} to {}, median {}", at(0), at(1), at(0.5));
}

// Whether the rows' facts and levels allow `gpus` rows per tick; `why` says why not.
bool values_allow(std::span<const TickRow> rows, unsigned gpus, unsigned most, std::string& why) {
  if (const auto i = facts_differ_at(rows, gpus)) {
    why = fmt::format(
        "rows {} apart, which would be the same GPU, have different fixed facts (lines {} and "
        "{})",
        gpus, rows[*i].line, rows[*i + gpus].line);
    return false;
  }
  const unsigned levels = level_period(rows, most);
  if (levels != 0 && gpus % levels != 0) {
    why = fmt::format(
        "{} repeat every {} rows, not from row to row: rows of {} GPUs take turns, which "
        "ticks of {} row{} cannot hold",
        rows.front().level_names.empty()
            ? "the rows' levels"
            : fmt::format("{}", fmt::join(rows.front().level_names, " and ")),
        levels, levels, gpus, gpus == 1 ? "" : "s");
    return false;
  }
  return true;
}

// Where the rows fall into ticks of one count clearly at first and then no longer: that count
// and where it stopped ("" where no count does).
std::string shifted_text(std::span<const TickRow> rows, std::span<const std::int64_t> t,
                         unsigned most) {
  for (unsigned gpus = 2; gpus <= most; ++gpus) {
    const Fit f = fit_of(t, gpus, 0);
    if (f.shift_row != 0 && f.prefix_ticks >= 8 && f.prefix_separated >= kApart) {
      return fmt::format(
          "; its rows fall into ticks of {} until the tick at line {}, then no longer: a row is "
          "missing or extra there, and which GPU cannot be told",
          gpus, rows[f.shift_row].line);
    }
  }
  return {};
}

// The smallest count of at least 2 whose ticks fit the times clearly, with its first place.
std::optional<std::pair<unsigned, Fit>> clear_count(std::span<const std::int64_t> t, unsigned most,
                                                    unsigned& first) {
  for (unsigned gpus = 2; gpus <= most; ++gpus) {
    auto best = best_fit(t, gpus);
    if (best.second.clear()) {
      first = best.first;
      return std::make_pair(gpus, best.second);
    }
  }
  return std::nullopt;
}

std::optional<TickShape> given_shape(std::span<const TickRow> rows, std::span<const std::int64_t> t,
                                     unsigned gpus, unsigned most, std::string& why) {
  unsigned first = 0;
  if (const auto clear = clear_count(t, most, first); clear && clear->first != gpus) {
    why = fmt::format("--log-gpus {} was given, but the log's ticks hold {} rows each ({})", gpus,
                      clear->first, gaps_text(t));
    return std::nullopt;
  }
  if (!values_allow(rows, gpus, most, why)) {
    why = fmt::format("--log-gpus {} was given, but {}", gpus, why);
    return std::nullopt;
  }
  TickShape shape;
  shape.gpus = gpus;
  if (gpus > 1) {
    // A log that starts at a tick's start (nvidia-smi's first row is GPU 0) is checked from
    // there, even where a row goes missing further on; else the best place, if its ticks stand
    // apart.
    const Fit at_start = fit_of(t, gpus, 0);
    const auto [place, fit] = best_fit(t, gpus);
    shape.timed = at_start.clear_prefix() || fit.clear_prefix();
    shape.first_position = at_start.clear_prefix() || !shape.timed ? 0 : place;
    shape.interval_ns =
        at_start.clear_prefix() || !shape.timed ? at_start.period_ns : fit.period_ns;
  } else {
    shape.interval_ns = fit_of(t, 1, 0).period_ns;
  }
  shape.evidence = shape.timed ? "--log-gpus, which the ticks' times confirm"
                               : "--log-gpus (the times alone do not tell)";
  return shape;
}

}  // namespace

std::optional<TickShape> tick_shape(std::span<const TickRow> rows, std::optional<unsigned> gpus,
                                    std::string& why) {
  std::vector<std::int64_t> t;
  t.reserve(rows.size());
  for (const auto& r : rows) t.push_back(r.wall_ns);
  const unsigned most = std::clamp<unsigned>(static_cast<unsigned>(rows.size() / 3), 1, kMostGpus);
  if (gpus) return given_shape(rows, t, *gpus, std::max(most, *gpus), why);
  if (rows.size() == 1) {
    TickShape one;
    one.evidence = "a single row";
    return one;
  }
  if (rows.size() < 4) {
    why = fmt::format("it has too few rows ({}) to tell its ticks apart", rows.size());
    return std::nullopt;
  }
  TickShape shape;
  unsigned first = 0;
  if (const auto clear = clear_count(t, most, first)) {
    shape.gpus = clear->first;
    shape.first_position = first;
    shape.interval_ns = clear->second.period_ns;
    shape.timed = true;
    shape.evidence = "the times: rows of one tick closer together than the gaps between ticks";
  } else if (one_per_tick(t)) {
    shape.interval_ns = fit_of(t, 1, 0).period_ns;
    shape.evidence = "the times: one row per tick, evenly spaced";
  } else {
    why = fmt::format("no count of rows per tick from 1 to {} fits its times ({}){}", most,
                      gaps_text(t), shifted_text(rows, t, most));
    return std::nullopt;
  }
  if (!values_allow(rows, shape.gpus, most, why)) {
    why = fmt::format("its times say {} row{} per tick, yet {}", shape.gpus,
                      shape.gpus == 1 ? "" : "s", why);
    return std::nullopt;
  }
  if (std::any_of(rows.begin(), rows.end(), [](const TickRow& r) {
        return std::any_of(r.facts.begin(), r.facts.end(),
                           [](const std::string& f) { return !f.empty(); });
      })) {
    shape.evidence += "; the GPUs' fixed facts agree";
  }
  return shape;
}

}  // namespace gpuscope::ingest
