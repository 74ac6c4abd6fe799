#include "analyze/carbon.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "analyze/analyzer.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::analyze {

namespace {

constexpr std::string_view kOwid = "Our World in Data / Ember, yearly average (as CodeCarbon)";

// Sources and years in docs/analysis.md; keep the two in step.
constexpr std::array kRegions = {
    GridRegion{"FR", "France", 56.0, kOwid, 2023},
    GridRegion{"US", "United States", 369.5, kOwid, 2023},
    GridRegion{"DE", "Germany", 381.0, kOwid, 2023},
    GridRegion{"GB", "United Kingdom", 237.6, kOwid, 2023},
    GridRegion{"GB-NESO", "Great Britain (Carbon Intensity API)", 162.0,
               "UK Carbon Intensity API (NESO), yearly average (as iris-gpubench)", 2023},
    GridRegion{"CN", "China", 582.3, kOwid, 2023},
    GridRegion{"IN", "India", 713.4, kOwid, 2023},
    GridRegion{"NO", "Norway", 30.1, kOwid, 2023},
    GridRegion{"SE", "Sweden", 40.7, kOwid, 2023},
    GridRegion{"PL", "Poland", 661.9, kOwid, 2023},
    GridRegion{"CA", "Canada", 170.0, kOwid, 2023},
    GridRegion{"CH", "Switzerland", 34.8, kOwid, 2023},
    GridRegion{"JP", "Japan", 485.4, kOwid, 2023},
    GridRegion{"WORLD", "World", 475.0,
               "IEA Global Energy & CO2 Status Report (CodeCarbon's world fallback)", 2019},
};

// Other spellings people use: "UK" is not the ISO code but everyone writes it.
struct Alias {
  std::string_view alias, code;
};
constexpr std::array kAliases = {Alias{"UK", "GB"}, Alias{"UK-NESO", "GB-NESO"}};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  const auto lower = [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

constexpr double kJoulesPerKwh = 3.6e6;

// How far a period's figure is from a measurement, for the label of a greener start.
int distance_from_measured(const IntensityKind& kind) {
  switch (kind.value()) {
    case IntensityKind::Actual:
    case IntensityKind::Given:
      return 0;
    case IntensityKind::Estimated:
      return 1;
    case IntensityKind::Forecast:
      return 2;
    case IntensityKind::Other:
      break;
  }
  return 3;
}

}  // namespace

std::span<const GridRegion> builtin_regions() {
  return kRegions;
}

std::optional<GridRegion> find_region(std::string_view code) {
  for (const Alias& alias : kAliases) {
    if (equal_ignoring_case(code, alias.alias)) code = alias.code;
  }
  for (const GridRegion& region : kRegions) {
    if (equal_ignoring_case(code, region.code)) return region;
  }
  return std::nullopt;
}

double carbon_grams(double joules, double g_per_kwh, double pue) {
  if (!(pue >= 1)) return std::numeric_limits<double>::quiet_NaN();
  return joules / kJoulesPerKwh * g_per_kwh * pue;
}

double carbon_grams(std::span<const EnergyInterval> energy,
                    std::span<const IntensityInterval> intensity, double pue) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (!(pue >= 1) || intensity.empty()) return kNaN;

  std::vector<IntensityInterval> periods(intensity.begin(), intensity.end());
  std::stable_sort(periods.begin(), periods.end(),
                   [](const auto& a, const auto& b) { return a.start_wall_ns < b.start_wall_ns; });
  // Period i is in force over [boundary[i − 1], boundary[i]): until the next one starts, or
  // halfway across a gap to it (the nearest one holds); the first and last extend forever.
  constexpr std::int64_t kLowest = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kHighest = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> boundary;
  for (std::size_t i = 0; i + 1 < periods.size(); ++i) {
    const std::int64_t end = std::max(periods[i].end_wall_ns, periods[i].start_wall_ns);
    const std::int64_t next = periods[i + 1].start_wall_ns;
    boundary.push_back(end >= next ? next : end + (next - end) / 2);
  }
  const auto lower_edge = [&](std::size_t i) { return i == 0 ? kLowest : boundary[i - 1]; };
  const auto upper_edge = [&](std::size_t i) {
    return i == boundary.size() ? kHighest : boundary[i];
  };

  double kwh_grams = 0;  // Σ kWh × g/kWh
  for (const EnergyInterval& interval : energy) {
    if (std::isnan(interval.joules)) continue;
    const double kwh = interval.joules / kJoulesPerKwh;
    const std::int64_t begin = interval.start_wall_ns;
    auto period = static_cast<std::size_t>(
        std::upper_bound(boundary.begin(), boundary.end(), begin) - boundary.begin());
    if (interval.end_wall_ns <= begin) {  // an instant: all of it at the intensity then
      kwh_grams += kwh * periods[period].g_per_kwh;
      continue;
    }
    const auto duration = static_cast<double>(interval.end_wall_ns - begin);
    for (; period < periods.size() && lower_edge(period) < interval.end_wall_ns; ++period) {
      const std::int64_t overlap =
          std::min(interval.end_wall_ns, upper_edge(period)) - std::max(begin, lower_edge(period));
      if (overlap <= 0) continue;
      kwh_grams += kwh * (static_cast<double>(overlap) / duration) * periods[period].g_per_kwh;
    }
  }
  return kwh_grams * pue;
}

std::optional<GreenerStart> greener_start(std::span<const IntensityPeriod> periods,
                                          std::span<const double> energy_j, double pue,
                                          std::int64_t horizon_ns) {
  const std::size_t n = std::min(periods.size(), energy_j.size());
  std::size_t first = n, last = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (energy_j[k] > 0) {
      first = std::min(first, k);
      last = k;
    }
  }
  if (first == n) return std::nullopt;
  // contiguous_from[k]: periods k..k+m follow each other without a gap while k+m < this.
  std::vector<std::size_t> run_end(n);
  for (std::size_t k = n; k-- > 0;) {
    run_end[k] = k + 1 < n && periods[k].end_wall_ns == periods[k + 1].start_wall_ns
                     ? run_end[k + 1]
                     : k + 1;
  }
  auto grams_at = [&](std::size_t shift) {
    double grams = 0;
    for (std::size_t k = first; k <= last; ++k) {
      grams += carbon_grams(energy_j[k], periods[k + shift].g_per_kwh, pue);
    }
    return grams;
  };
  GreenerStart best;
  best.baseline_grams = grams_at(0);
  best.grams = best.baseline_grams;
  for (std::size_t shift = 1; last + shift < n; ++shift) {
    const std::int64_t later = periods[first + shift].start_wall_ns - periods[first].start_wall_ns;
    if (later > horizon_ns) break;
    if (run_end[first + shift] <= last + shift) continue;  // a gap under the moved profile
    const double grams = grams_at(shift);
    if (grams < best.grams) {
      best.grams = grams;
      best.shift = shift;
      best.later_ns = later;
      best.start_wall_ns = periods[first + shift].start_wall_ns;
    }
  }
  if (best.shift == 0 || !(best.baseline_grams > 0)) return std::nullopt;
  best.saving = 1 - best.grams / best.baseline_grams;
  if (best.saving < 0.01) return std::nullopt;
  best.kind = IntensityKind::Actual;
  for (std::size_t k = first + best.shift; k <= last + best.shift; ++k) {
    if (distance_from_measured(periods[k].kind) > distance_from_measured(best.kind)) {
      best.kind = periods[k].kind;
    }
  }
  return best;
}

namespace {

// Carbon from the grid series: each period's energy (all GPUs' counters split at its edges) times
// its intensity; energy in the gaps, and that of GPUs without a counter, at `c`'s flat figure
// (the user's --carbon-intensity or the yearly average), which also gives the comparison.
void series_carbon(const IntensitySeries& series, std::span<const std::ptrdiff_t> slot_period,
                   Analysis& a, double energy_j, Carbon& c) {
  std::vector<double> slot_j(slot_period.size(), 0.0);
  double split_j = 0;
  for (const auto& g : a.gpus) {
    if (g.energy.slot_j.size() != slot_j.size()) continue;
    for (std::size_t k = 0; k < slot_j.size(); ++k) {
      slot_j[k] += g.energy.slot_j[k];
      split_j += g.energy.slot_j[k];
    }
  }
  const double flat_g_per_kwh = c.g_per_kwh;
  c.yearly_grams = c.grams;
  c.fallback_source = c.source;
  double in_periods_j = 0, grams = 0;
  std::vector<double> period_j(series.periods.size(), 0.0);
  for (std::size_t k = 0; k < slot_j.size(); ++k) {
    const std::ptrdiff_t p = slot_period[k];
    if (p < 0) continue;
    period_j[static_cast<std::size_t>(p)] = slot_j[k];
    const IntensityPeriod& period = series.periods[static_cast<std::size_t>(p)];
    CarbonInterval interval{
        period.start_wall_ns, period.end_wall_ns, period.g_per_kwh,
        period.kind,          slot_j[k],          carbon_grams(slot_j[k], period.g_per_kwh, c.pue)};
    in_periods_j += slot_j[k];
    grams += interval.grams;
    if (slot_j[k] > 0) c.intervals.push_back(std::move(interval));
  }
  // What the periods did not cover: the gaps, and GPUs whose counter could not be split.
  const double outside_j = std::max(0.0, energy_j - in_periods_j);
  grams += carbon_grams(outside_j, flat_g_per_kwh, c.pue);
  c.grams = grams;
  c.coverage = energy_j > 0 ? in_periods_j / energy_j : 0.0;
  c.g_per_kwh = energy_j > 0 ? grams / c.pue / (energy_j / 3.6e6) : flat_g_per_kwh;
  c.source = series.source;
  c.region = series.region;
  if (outside_j > 0.005 * energy_j) {
    a.notes.push_back(fmt::format(
        "{:.0f} % of the energy fell outside the periods of {} and was counted at {:.0f} gCO2e/kWh "
        "({})",
        100 * outside_j / energy_j, series.source, flat_g_per_kwh, c.fallback_source));
  }
  if (split_j <= 0) {
    a.notes.push_back("no GPU's energy counter could be split at the periods of " + series.source +
                      ": carbon counted at the flat figure");
  }
  // Each GPU's own carbon: its periods' energy at their intensity, the rest at the flat figure.
  for (auto& g : a.gpus) {
    const std::optional<double> gpu_j =
        g.energy.counter_j ? g.energy.counter_j : g.energy.integrated_j;
    if (!gpu_j) continue;
    double gpu_in_j = 0, gpu_g = 0;
    if (g.energy.slot_j.size() == slot_period.size()) {
      for (std::size_t k = 0; k < slot_period.size(); ++k) {
        if (slot_period[k] < 0) continue;
        const auto& period = series.periods[static_cast<std::size_t>(slot_period[k])];
        gpu_in_j += g.energy.slot_j[k];
        gpu_g += carbon_grams(g.energy.slot_j[k], period.g_per_kwh, c.pue);
      }
    }
    g.energy.carbon_g =
        gpu_g + carbon_grams(std::max(0.0, *gpu_j - gpu_in_j), flat_g_per_kwh, c.pue);
  }
  constexpr std::int64_t kDayNs = 24LL * 3600 * 1'000'000'000;
  c.greener = greener_start(series.periods, period_j, c.pue, kDayNs);
  if (c.greener) {
    const auto& g = *c.greener;
    const auto later_min = g.later_ns / 60'000'000'000;
    a.findings.push_back(
        {"greener_start",
         fmt::format("starting {} h {:02} min later (in the period from {} UTC) would have emitted "
                     "{:.0f} % less: {:.3g} instead of {:.3g} gCO2e (an estimate: the same energy "
                     "profile, the grid's {} figures)",
                     later_min / 60, later_min % 60,
                     util::utc_text(g.start_wall_ns, "%Y-%m-%d %H:%M"), 100 * g.saving, g.grams,
                     g.baseline_grams, g.kind.text())});
  }
}

}  // namespace

CarbonSlots carbon_slots(const IntensitySeries& series, const std::vector<RunMeta>& runs,
                         std::int64_t t0_wall_ns) {
  CarbonSlots slots;
  const auto& periods = series.periods;
  if (periods.empty()) return slots;
  auto seconds = [t0_wall_ns](std::int64_t wall_ns) {
    return static_cast<double>(wall_ns - t0_wall_ns) / 1e9;
  };
  // Only the periods the runs could have used: each GPU keeps one energy per slot, so a series
  // of years (a 64 MiB file) must not cost runs × GPUs × its length. The day after the runs
  // stays, for the greener-start estimate; a run still going (no end) bounds nothing.
  std::int64_t last_end = 0;
  for (const auto& run : runs) {
    last_end = run.end_wall_ns > 0 ? std::max(last_end, run.end_wall_ns)
                                   : std::numeric_limits<std::int64_t>::max();
  }
  constexpr std::int64_t kDayNs = 24LL * 3600 * 1'000'000'000;
  const std::int64_t keep_until =
      last_end > std::numeric_limits<std::int64_t>::max() - kDayNs ? last_end : last_end + kDayNs;
  slots.edges_s.push_back(-1e18);
  for (std::size_t i = 0; i < periods.size(); ++i) {
    if (periods[i].end_wall_ns <= t0_wall_ns || periods[i].start_wall_ns >= keep_until) {
      continue;
    }
    const double start = seconds(periods[i].start_wall_ns);
    if (start > slots.edges_s.back()) {
      slots.period.push_back(-1);
      slots.edges_s.push_back(start);
    }
    slots.period.push_back(static_cast<std::ptrdiff_t>(i));
    slots.edges_s.push_back(seconds(periods[i].end_wall_ns));
  }
  slots.period.push_back(-1);
  slots.edges_s.push_back(1e18);
  return slots;
}

Carbon analysis_carbon(const AnalysisOptions& options, const CarbonSlots& slots, double energy_j,
                       Analysis& a) {
  Carbon c;
  c.pue = options.pue;
  const auto region = find_region(options.region.value_or("WORLD"));
  const GridRegion r = region ? *region : *find_region("WORLD");
  const std::string yearly_source =
      fmt::format("{} yearly average {} ({})", r.name, r.year, r.source);
  if (options.carbon_g_per_kwh) {
    c.g_per_kwh = *options.carbon_g_per_kwh;
    c.source = "given with --carbon-intensity";
  } else {
    c.g_per_kwh = r.g_per_kwh;
    c.region = std::string(r.code);
    c.source = yearly_source;
    if (!options.region) c.source += "; pass --region or --carbon-intensity for your grid";
  }
  c.grams = carbon_grams(energy_j, c.g_per_kwh, c.pue);
  for (auto& g : a.gpus) {
    const std::optional<double> gpu_j =
        g.energy.counter_j ? g.energy.counter_j : g.energy.integrated_j;
    if (gpu_j) g.energy.carbon_g = carbon_grams(*gpu_j, c.g_per_kwh, c.pue);
  }
  if (!slots.period.empty()) series_carbon(*options.grid_series, slots.period, a, energy_j, c);
  if (a.work_units && *a.work_units > 0) c.grams_per_unit = c.grams / *a.work_units;
  return c;
}

}  // namespace gpuscope::analyze
