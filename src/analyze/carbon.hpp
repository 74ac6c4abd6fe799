// Carbon: grid intensity (built-in yearly averages or the user's figure), PUE, and emissions
// from energy, flat or period by period from a grid intensity series (a user's file or a grid
// API's answer, read by carbon/; docs/analysis.md §8), and the greener start it suggests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/grid_intensity.hpp"

namespace gpuscope::analyze {

struct GridRegion {
  std::string_view code;  // ISO 3166-1 alpha-2 ("FR"), "WORLD", or "GB-NESO" (see below)
  std::string_view name;
  double g_per_kwh;
  std::string_view source;  // where the figure comes from
  int year;
};

// Yearly grid averages (docs/analysis.md §8: Our World in Data / Ember 2023, as CodeCarbon
// uses; world 475 from the IEA, CodeCarbon's fallback). The UK has two rows: "GB" is the
// OWID/Ember figure, like every other country, and "GB-NESO" the 2023 average of the UK
// Carbon Intensity API (NESO) that iris-gpubench uses. "UK" is accepted for GB and "UK-NESO"
// for GB-NESO. Sources and years are listed in docs/analysis.md.
std::span<const GridRegion> builtin_regions();
// Case-insensitive lookup; nullopt for unknown codes.
std::optional<GridRegion> find_region(std::string_view code);

// The intensity in force over [start, end) (wall clock, ns); the last interval extends forever.
struct IntensityInterval {
  std::int64_t start_wall_ns = 0;
  std::int64_t end_wall_ns = 0;
  double g_per_kwh = 0;
};

// Energy used over [start, end) (wall clock, ns).
struct EnergyInterval {
  std::int64_t start_wall_ns = 0;
  std::int64_t end_wall_ns = 0;
  double joules = 0;
};

// Grams CO2e of `joules` at a constant intensity, times the facility's PUE (≥ 1; NaN for a
// PUE below 1 or NaN, which would understate).
double carbon_grams(double joules, double g_per_kwh, double pue);

// Σ over energy intervals of energy × the intensity in force, each energy interval split
// proportionally across the intensity intervals it overlaps; times PUE. Energy outside every
// intensity interval uses the nearest one (a gap between two is split at its midpoint); where
// intervals overlap, each holds from its start until the next one starts. An energy interval
// with end ≤ start counts at the intensity at its start. NaN energies are skipped. NaN when
// `intensity` is empty or the PUE is below 1; 0 when `energy` is empty.
double carbon_grams(std::span<const EnergyInterval> energy,
                    std::span<const IntensityInterval> intensity, double pue);

// The job's energy profile moved to a later start, whole periods at a time, within `horizon_ns`
// of where it began: the shift with the least carbon, when it saves at least 1 %. `energy_j[p]`
// is the job's energy in periods[p] (zero outside the job). A shift counts only where the
// periods it lands on follow each other without a gap. An estimate: the same energy in the same
// order, the grid's figures (often forecasts) as they are.
// `kind` names the least measured figures the moved profile lands on: Forecast when any period is
// a forecast, else Estimated when any is an estimate, else Actual (a user's own figures count
// as measured; a kind this gpuscope does not know is named as it was stored).
struct GreenerStart {
  std::size_t shift = 0;           // periods later
  std::int64_t start_wall_ns = 0;  // the start of the period the job's first period moves to
  std::int64_t later_ns = 0;       // how much later
  double grams = 0;                // the job's in-period carbon started then
  double baseline_grams = 0;       // the same, as it ran
  double saving = 0;               // 1 - grams / baseline_grams
  IntensityKind kind = IntensityKind::Actual;  // see above
};
std::optional<GreenerStart> greener_start(std::span<const IntensityPeriod> periods,
                                          std::span<const double> energy_j, double pue,
                                          std::int64_t horizon_ns);

// The analysis' carbon (analysis.hpp and analyzer.hpp define these; analysis.hpp includes this).
struct Analysis;
struct AnalysisOptions;
struct Carbon;
struct RunMeta;

// A grid series' periods on the analysis' time axis (seconds since `t0_wall_ns`), as slots: a
// gap before the first period, each period, a gap wherever the next one does not start where
// this one ends, a gap after the last; ±1e18 s stand for "unbounded" (the counter's readings
// clamp them). Only the periods the runs could have used and the day after them (for the
// greener start), since each GPU keeps one energy per slot. Empty for a series without periods.
struct CarbonSlots {
  std::vector<double> edges_s;         // slots + 1 edges
  std::vector<std::ptrdiff_t> period;  // each slot's index in series.periods, or -1 for a gap
};
CarbonSlots carbon_slots(const IntensitySeries& series, const std::vector<RunMeta>& runs,
                         std::int64_t t0_wall_ns);

// The carbon of the job's energy `energy_j` and each GPU's (`a.gpus[].energy.carbon_g`): with
// `slots` of options.grid_series, each period's energy times its intensity (its notes and the
// greener-start finding added to `a`); else, and for the energy the periods did not cover, the
// user's --carbon-intensity, the region's yearly average, else the world average.
Carbon analysis_carbon(const AnalysisOptions& options, const CarbonSlots& slots, double energy_j,
                       Analysis& a);

}  // namespace gpuscope::analyze
