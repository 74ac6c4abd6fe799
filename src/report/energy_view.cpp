#include "report/energy_view.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>

#include "report/analysis_view.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::report {

using analyze::Analysis;
using nlohmann::json;

namespace {

// "2026-11-25 13:30" (UTC), for a period's edge; with seconds when it has them.
std::string utc_minute(std::int64_t wall_ns) {
  const bool whole_minute = wall_ns % 60'000'000'000 == 0;
  return util::utc_text(wall_ns, whole_minute ? "%Y-%m-%d %H:%M" : "%Y-%m-%d %H:%M:%S");
}

}  // namespace

std::string energy_text(const Analysis& a, const Style& style) {
  std::string out = "\n" + style.bold("Energy and carbon") + "\n";
  if (a.energy_counter_j) {
    out += fmt::format("  energy (hardware counter)   {}  ({:.1f} Wh)\n",
                       format_energy(*a.energy_counter_j), *a.energy_counter_j / 3600);
  }
  if (a.energy_integrated_j) {
    std::string diff;
    if (a.energy_counter_j && *a.energy_counter_j > 0) {
      diff = fmt::format("  ({:+.1f} % vs the counter)",
                         100 * (*a.energy_integrated_j / *a.energy_counter_j - 1));
    }
    out += fmt::format("  energy (integrated power)   {}{}\n",
                       format_energy(*a.energy_integrated_j), diff);
  }
  if (!a.energy_counter_j && !a.energy_integrated_j) out += "  no energy or power readings\n";
  // Time with clocks held down, summed over GPUs, against the time observed.
  std::array<double, analyze::kThrottleReasonCount> held{};
  double observed = 0, any = 0;
  for (const auto& g : a.gpus) {
    if (!g.energy.throttle) continue;
    for (std::size_t k = 0; k < held.size(); ++k) held[k] += g.energy.throttle->seconds[k];
    observed += g.energy.throttle->observed_s;
    any += g.energy.throttle->any_s;
  }
  if (observed > 0) {
    std::string why;
    for (std::size_t k = 0; k < held.size(); ++k) {
      if (held[k] <= 0) continue;
      why += fmt::format("{}{} {:.1f} %", why.empty() ? "" : ", ", analyze::kThrottleReasonNames[k],
                         100 * held[k] / observed);
    }
    out += why.empty() ? "  clocks held down            never (no power cap or thermal slowdown)\n"
                       : fmt::format("  clocks held down            {:.1f} % of the time ({})\n",
                                     100 * any / observed, why);
  }
  if (a.energy_per_unit_j) {
    out += fmt::format(
        "  per {}                 {:.3g} J  ({:.0f} {} per kWh)\n", a.work_name,
        *a.energy_per_unit_j,
        *a.work_units /
            ((a.energy_counter_j ? *a.energy_counter_j : *a.energy_integrated_j) / 3.6e6),
        a.work_name);
  }
  if (a.carbon) {
    const auto& c = *a.carbon;
    out += fmt::format("  carbon                      {:.1f} gCO2e at {:.1f} g/kWh, PUE {:.2f}\n",
                       c.grams, c.g_per_kwh, c.pue);
    if (c.grams_per_unit)
      out +=
          fmt::format("  carbon per {}            {:.3g} gCO2e\n", a.work_name, *c.grams_per_unit);
    out += style.dim("  intensity: " + c.source +
                     (c.region.empty() || c.intervals.empty() ? "" : " (" + c.region + ")")) +
           "\n";
    if (c.coverage) {
      // A grid series: the comparison with the flat figure, then each period.
      out += fmt::format("  periods                     {} with energy, covering {:.0f} % of it\n",
                         c.intervals.size(), 100 * *c.coverage);
      if (c.yearly_grams && *c.yearly_grams > 0) {
        out +=
            fmt::format("  at the flat figure          {:.1f} gCO2e ({:+.0f} %): {}\n",
                        *c.yearly_grams, 100 * (c.grams / *c.yearly_grams - 1), c.fallback_source);
      }
      constexpr std::size_t kShown = 12;
      std::vector<std::vector<std::string>> rows;
      for (std::size_t i = 0; i < c.intervals.size() && i < kShown; ++i) {
        const auto& p = c.intervals[i];
        rows.push_back({utc_minute(p.start_wall_ns), utc_minute(p.end_wall_ns),
                        std::string(p.kind.text()), fmt::format("{:.0f}", p.g_per_kwh),
                        format_energy(p.energy_j), fmt::format("{:.2f} g", p.grams)});
      }
      out += table({"from (UTC)", "to", "kind", "gCO2e/kWh", "energy", "carbon"}, rows, style);
      if (c.intervals.size() > kShown) {
        out += style.dim(fmt::format("  … and {} more periods (--json lists them all)",
                                     c.intervals.size() - kShown)) +
               "\n";
      }
    }
  }
  return out;
}

json energy_json(const Analysis& a) {
  return {{"counter", opt(a.energy_counter_j)}, {"integrated", opt(a.energy_integrated_j)}};
}

json work_json(const Analysis& a) {
  return {{"units", opt(a.work_units)},
          {"name", a.work_name},
          {"energy_per_unit_j", opt(a.energy_per_unit_j)}};
}

json carbon_json(const Analysis& a) {
  json carbon = nullptr;
  if (a.carbon) {
    const auto& c = *a.carbon;
    json intervals = json::array();
    for (const auto& p : c.intervals) {
      intervals.push_back({{"start_wall_ns", p.start_wall_ns},
                           {"end_wall_ns", p.end_wall_ns},
                           {"g_per_kwh", p.g_per_kwh},
                           {"kind", std::string(p.kind.text())},
                           {"energy_j", p.energy_j},
                           {"grams", p.grams}});
    }
    carbon = {{"grams", c.grams},
              {"g_per_kwh", c.g_per_kwh},
              {"source", c.source},
              {"region", c.region},
              {"pue", c.pue},
              {"grams_per_unit", opt(c.grams_per_unit)},
              {"intervals", intervals},
              {"coverage", opt(c.coverage)},
              {"flat_grams", opt(c.yearly_grams)},
              {"flat_source", c.fallback_source.empty() ? json(nullptr) : json(c.fallback_source)},
              {"greener_start",
               c.greener ? json{{"start_wall_ns", c.greener->start_wall_ns},
                                {"later_s", static_cast<double>(c.greener->later_ns) / 1e9},
                                {"grams", c.greener->grams},
                                {"baseline_grams", c.greener->baseline_grams},
                                {"saving", c.greener->saving},
                                {"kind", std::string(c.greener->kind.text())},
                                {"estimate", true}}
                         : json(nullptr)}};
  }
  return carbon;
}

std::string carbon_csv(const Analysis& a) {
  auto num = [](double v) { return fmt::format("{}", v); };
  // One row per grid period with energy (none without a series: the header alone).
  std::string out = "start,end,kind,g_per_kwh,energy_j,grams\n";
  if (!a.carbon) return out;
  for (const auto& p : a.carbon->intervals) {
    out += fmt::format("{},{},{},{},{},{}\n", util::utc_text(p.start_wall_ns, "%Y-%m-%dT%H:%M:%SZ"),
                       util::utc_text(p.end_wall_ns, "%Y-%m-%dT%H:%M:%SZ"), p.kind.text(),
                       num(p.g_per_kwh), num(p.energy_j), num(p.grams));
  }
  return out;
}

}  // namespace gpuscope::report
