#include "analyze/mig_share.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::size_t bin_of(double t_s, double bin_s, std::size_t bins) {
  if (!(t_s > 0) || bins == 0) return 0;
  const double b = t_s / bin_s;
  return b >= static_cast<double>(bins - 1) ? bins - 1 : static_cast<std::size_t>(b);
}

// Spreads `joules` over [a, b] (seconds) on the bins in proportion to time, as constant power;
// the first bin reaches back to -∞, the last on to +∞, so nothing falls outside.
void spread(double a, double b, double joules, MigBins& out) {
  const std::size_t bins = out.energy_j.size();
  const std::size_t first = bin_of(a, out.bin_s, bins), last = bin_of(b, out.bin_s, bins);
  if (first == last || b <= a) {
    out.energy_j[first] += joules;
    out.covered_s[first] += std::max(0.0, b - a);
    return;
  }
  for (std::size_t k = first; k <= last; ++k) {
    const double lo = k == first ? a : static_cast<double>(k) * out.bin_s;
    const double hi = k == last ? b : static_cast<double>(k + 1) * out.bin_s;
    const double part = std::max(0.0, hi - lo);
    out.energy_j[k] += joules * part / (b - a);
    out.covered_s[k] += part;
  }
}

}  // namespace

std::optional<double> mig_slice_share(const MigIdentity& mig) {
  if (!mig.parent_slices || *mig.parent_slices == 0) return std::nullopt;
  std::optional<unsigned> slices = mig.gpu_slices;
  if (!slices && mig.profile) {
    // "3g.40gb", "1c.3g.20gb": the digits before "g."
    const std::string& p = *mig.profile;
    const auto g = p.find("g.");
    std::size_t start = g;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(p[start - 1])) != 0) --start;
    if (g != std::string::npos && start < g) slices = std::stoul(p.substr(start, g - start));
  }
  if (!slices) return std::nullopt;
  return std::min(1.0, static_cast<double>(*slices) / *mig.parent_slices);
}

MigBins mig_parent_bins(std::span<const double> t_s, std::span<const double> counter_mj,
                        std::span<const double> power_w, double max_gap_s, double bin_s,
                        std::size_t bins) {
  MigBins out;
  out.bin_s = bin_s;
  out.energy_j.assign(bins, 0.0);
  out.covered_s.assign(bins, 0.0);
  if (bins == 0 || !(bin_s > 0)) return {};
  // The counter where it has two readings: each increase spread over its interval (a reset's
  // interval left out, as counter_energy does).
  bool any = false;
  std::size_t prev = t_s.size();
  for (std::size_t i = 0; i < t_s.size() && i < counter_mj.size(); ++i) {
    if (std::isnan(counter_mj[i]) || !std::isfinite(t_s[i])) continue;
    if (prev < t_s.size() && counter_mj[i] >= counter_mj[prev]) {
      spread(t_s[prev], t_s[i], (counter_mj[i] - counter_mj[prev]) / 1000.0, out);
      any = true;
    }
    prev = i;
  }
  if (any) return out;
  // Else power, integrated as trapezoids between readings at most max_gap_s apart.
  prev = t_s.size();
  for (std::size_t i = 0; i < t_s.size() && i < power_w.size(); ++i) {
    if (std::isnan(power_w[i]) || !std::isfinite(t_s[i])) continue;
    if (prev < t_s.size() && t_s[i] - t_s[prev] <= max_gap_s) {
      spread(t_s[prev], t_s[i], (power_w[i] + power_w[prev]) / 2 * (t_s[i] - t_s[prev]), out);
      any = true;
    }
    prev = i;
  }
  return any ? out : MigBins{};
}

constexpr double kActivityHoldS = 1.0;

MigBins mig_instance_bins(std::span<const double> t_s, std::span<const double> activity,
                          double bin_s, std::size_t bins) {
  MigBins out;
  out.bin_s = bin_s;
  out.activity.assign(bins, kNaN);
  out.present.assign(bins, 0);
  std::vector<std::uint32_t> count(bins, 0);
  // A GPM reading covers the time since the one before (at least 100 ms: samples between two
  // readings have none); such a sample takes the last reading of the last second.
  double held = kNaN, held_t = 0;
  for (std::size_t i = 0; i < t_s.size() && i < activity.size() && bins > 0; ++i) {
    if (!std::isfinite(t_s[i])) continue;
    const std::size_t k = bin_of(t_s[i], bin_s, bins);
    out.present[k] = 1;
    double a = activity[i];
    if (!std::isnan(a)) {
      held = a;
      held_t = t_s[i];
    } else if (!std::isnan(held) && t_s[i] - held_t <= kActivityHoldS) {
      a = held;
    } else {
      continue;
    }
    out.activity[k] = count[k] == 0 ? a : out.activity[k] + a;
    ++count[k];
  }
  for (std::size_t k = 0; k < bins; ++k) {
    if (count[k] > 0) out.activity[k] /= count[k];
  }
  return out;
}

namespace {

bool present(const MigSplitInstance& i, std::size_t k) {
  return i.bins && k < i.bins->present.size() && i.bins->present[k] != 0;
}

double activity_at(const MigSplitInstance& i, std::size_t k) {
  return k < i.bins->activity.size() ? i.bins->activity[k] : kNaN;
}

// The parent's lowest mean power over bins at least half covered in which every instance
// sampled was known to be idle.
std::optional<double> idle_power(const MigBins& parent,
                                 std::span<const MigSplitInstance> instances) {
  std::optional<double> lowest;
  for (std::size_t k = 0; k < parent.energy_j.size(); ++k) {
    if (!(parent.covered_s[k] >= 0.5 * parent.bin_s) || parent.covered_s[k] <= 0) continue;
    bool idle = true;
    for (const auto& i : instances) {
      if (!present(i, k)) continue;
      const double a = activity_at(i, k);
      if (std::isnan(a) || a > kMigIdleActivity) idle = false;
    }
    if (!idle) continue;
    const double p = parent.energy_j[k] / parent.covered_s[k];
    if (!lowest || p < *lowest) lowest = p;
  }
  return lowest;
}

}  // namespace

MigSplitResult split_mig_energy(const MigBins& parent,
                                std::span<const MigSplitInstance> instances) {
  MigSplitResult r;
  const std::size_t n = instances.size();
  r.energy_j.assign(n, 0.0);
  r.slices_only_bins.assign(n, 0);
  r.shared_bins.assign(n, 0);
  if (const auto idle = idle_power(parent, instances)) {
    r.idle_power_w = *idle;
    r.idle_found = true;
  }
  // Slices held by more than the whole GPU (inconsistent data) are scaled to fit.
  double all_slices = 0;
  for (const auto& i : instances) all_slices += i.slices;
  const double scale = all_slices > 1 ? 1 / all_slices : 1;
  for (std::size_t k = 0; k < parent.energy_j.size(); ++k) {
    const double e = parent.energy_j[k];
    r.energy_j_total += e;
    r.covered_s += parent.covered_s[k];
    if (e <= 0) continue;
    const double idle = std::min(e, r.idle_power_w * parent.covered_s[k]);
    const double active = e - idle;
    double unknown_slices = 0, weight = 0, given = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (!present(instances[j], k)) continue;
      ++r.shared_bins[j];
      const double s = instances[j].slices * scale;
      const double a = activity_at(instances[j], k);
      double part = s * idle;
      if (std::isnan(a)) {
        part += s * active;
        unknown_slices += s;
        ++r.slices_only_bins[j];
      } else {
        weight += s * std::max(0.0, a);
      }
      r.energy_j[j] += part;
      given += part;
    }
    const double rest = active * (1 - unknown_slices);
    for (std::size_t j = 0; j < n; ++j) {
      if (!present(instances[j], k) || std::isnan(activity_at(instances[j], k))) continue;
      const double s = instances[j].slices * scale;
      const double part =
          weight > 0 ? rest * s * std::max(0.0, activity_at(instances[j], k)) / weight : s * active;
      r.energy_j[j] += part;
      given += part;
    }
    r.unattributed_j += std::max(0.0, e - given);
  }
  return r;
}

}  // namespace gpuscope::analyze
