#include "sweep/selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace gpuscope::sweep {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::optional<Spread> optional_spread(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return spread_of(values);
}

const SettingSummary* find_baseline(const std::vector<SettingSummary>& summaries) {
  for (const auto& s : summaries) {
    if (s.baseline && s.energy_j.count > 0) return &s;
  }
  return nullptr;
}

Recommendation make(const std::string& selector, const std::string& title,
                    const SettingSummary* chosen, const SettingSummary& baseline) {
  Recommendation r;
  r.selector = selector;
  r.title = title;
  if (chosen == nullptr) return r;
  r.setting = chosen->setting;
  r.energy_j = chosen->energy_j.mean;
  r.time_s = chosen->time_s.mean;
  r.energy_saving_pct = (baseline.energy_j.mean - r.energy_j) / baseline.energy_j.mean * 100;
  r.time_change_pct = (r.time_s - baseline.time_s.mean) / baseline.time_s.mean * 100;
  return r;
}

// The summary with the lowest cost among those `allowed`; summaries are ordered from the
// highest setting down, so a tie keeps the higher setting.
const SettingSummary* argmin(const std::vector<const SettingSummary*>& candidates,
                             const std::function<double(const SettingSummary&)>& cost,
                             const std::function<bool(const SettingSummary&)>& allowed) {
  const SettingSummary* best = nullptr;
  double best_cost = 0;
  for (const SettingSummary* s : candidates) {
    if (!allowed(*s)) continue;
    const double c = cost(*s);
    if (best == nullptr || c < best_cost) {
      best = s;
      best_cost = c;
    }
  }
  return best;
}

}  // namespace

std::vector<bool> flag_outliers(const std::vector<double>& values, double min_relative) {
  std::vector<bool> flags(values.size(), false);
  if (values.size() < 3) return flags;
  const double m = median(values);
  std::vector<double> deviations;
  for (double v : values) deviations.push_back(std::abs(v - m));
  const double mad = median(deviations);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double d = deviations[i];
    const bool far = m != 0 ? d / std::abs(m) > min_relative : d > 0;
    const bool robust = mad > 0 ? 0.6745 * d / mad > 3.5 : d > 0;
    flags[i] = far && robust;
  }
  return flags;
}

void mark_outliers(std::vector<Trial>& trials) {
  std::vector<double> settings;
  for (const auto& t : trials) settings.push_back(t.setting);
  std::sort(settings.begin(), settings.end());
  settings.erase(std::unique(settings.begin(), settings.end()), settings.end());
  for (double setting : settings) {
    std::vector<Trial*> ok;
    for (auto& t : trials) {
      t.outlier = t.setting == setting ? false : t.outlier;
      if (t.setting == setting && t.status == sweep::TrialStatus::Ok && t.energy_j)
        ok.push_back(&t);
    }
    std::vector<double> times, energies;
    for (const Trial* t : ok) {
      times.push_back(t->time_s);
      energies.push_back(*t->energy_j);
    }
    const auto by_time = flag_outliers(times);
    const auto by_energy = flag_outliers(energies);
    for (std::size_t i = 0; i < ok.size(); ++i) ok[i]->outlier = by_time[i] || by_energy[i];
  }
}

Spread spread_of(const std::vector<double>& values) {
  Spread s;
  s.count = static_cast<int>(values.size());
  if (values.empty()) return s;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  if (values.size() > 1) {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  return s;
}

std::vector<SettingSummary> summarize(const std::vector<Setting>& plan,
                                      const std::vector<Trial>& trials) {
  std::vector<SettingSummary> out;
  for (const Setting& setting : plan) {
    SettingSummary s;
    s.setting = setting.value;
    s.baseline = setting.baseline;
    std::vector<double> time, energy, power, throughput, per_unit, temperature, clock;
    for (const Trial& t : trials) {
      if (t.setting != setting.value || t.status == sweep::TrialStatus::Planned) continue;
      ++s.trials;
      if (t.outlier) ++s.outliers;
      if (t.status != sweep::TrialStatus::Ok || t.outlier || !t.energy_j) continue;
      time.push_back(t.time_s);
      energy.push_back(*t.energy_j);
      if (t.avg_power_w) power.push_back(*t.avg_power_w);
      if (t.throughput) throughput.push_back(*t.throughput);
      if (t.energy_per_unit_j) per_unit.push_back(*t.energy_per_unit_j);
      if (t.temperature_mean_c) temperature.push_back(*t.temperature_mean_c);
      if (t.sm_clock_mean_mhz) clock.push_back(*t.sm_clock_mean_mhz);
    }
    s.time_s = spread_of(time);
    s.energy_j = spread_of(energy);
    s.avg_power_w = optional_spread(power);
    s.throughput = optional_spread(throughput);
    s.energy_per_unit_j = optional_spread(per_unit);
    if (!temperature.empty()) s.temperature_mean_c = spread_of(temperature).mean;
    if (!clock.empty()) s.sm_clock_mean_mhz = spread_of(clock).mean;
    out.push_back(s);
  }
  return out;
}

std::vector<Recommendation> recommend(const std::vector<SettingSummary>& summaries,
                                      const SelectorOptions& o) {
  const SettingSummary* baseline = find_baseline(summaries);
  if (baseline == nullptr) return {};
  std::vector<const SettingSummary*> candidates;
  for (const auto& s : summaries) {
    if (s.energy_j.count > 0) candidates.push_back(&s);
  }
  std::vector<const SettingSummary*> ordered = candidates;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto* a, const auto* b) { return a->setting > b->setting; });
  const auto any = [](const SettingSummary&) { return true; };
  const auto energy = [](const SettingSummary& s) { return s.energy_j.mean; };
  const double time_bound = baseline->time_s.mean * (1 + o.max_slowdown);

  std::vector<Recommendation> out;
  out.push_back(make("min_energy", "minimum energy", argmin(ordered, energy, any), *baseline));
  out.push_back(make(
      "min_edp", "minimum energy × delay",
      argmin(
          ordered, [](const SettingSummary& s) { return s.energy_j.mean * s.time_s.mean; }, any),
      *baseline));
  Recommendation bounded =
      make("min_energy_bounded",
           fmt::format("minimum energy with slowdown ≤ {:g} %", o.max_slowdown * 100),
           argmin(ordered, energy,
                  [time_bound](const SettingSummary& s) { return s.time_s.mean <= time_bound; }),
           *baseline);
  out.push_back(bounded);
  const double eta = o.eta, p_max = o.p_max_w;
  out.push_back(make("zeus_cost", fmt::format("Zeus cost η·E + (1−η)·P_max·T (η = {:g})", eta),
                     argmin(
                         ordered,
                         [eta, p_max](const SettingSummary& s) {
                           return eta * s.energy_j.mean + (1 - eta) * p_max * s.time_s.mean;
                         },
                         any),
                     *baseline));
  return out;
}

}  // namespace gpuscope::sweep
