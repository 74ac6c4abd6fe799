#include "fleet/job_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyze/balance.hpp"
#include "analyze/carbon.hpp"
#include "analyze/score.hpp"

namespace gpuscope::fleet {

namespace {

SiteJobGpu gpu_row(const GpuAggregate& a, double seconds) {
  SiteJobGpu g;
  g.key = a.key;
  g.node = a.node;
  g.index = a.index;
  g.model = a.model;
  g.mig_profile = a.mig_profile;
  g.samples = std::llround(a.samples);
  g.util_pct = a.util_pct;
  g.sm_active_pct = a.sm_active_pct;
  g.idle_share = a.idle_share;
  g.peak_memory_bytes = a.memory_peak_bytes;
  g.memory_total_bytes = a.memory_total_bytes;
  if (!g.memory_total_bytes && a.memory_used_mean_bytes && a.memory_free_mean_bytes) {
    g.memory_total_bytes = *a.memory_used_mean_bytes + *a.memory_free_mean_bytes;
  }
  g.mean_power_w = a.power_mean_w;
  if (a.energy_rise_j) {
    g.energy_j = a.energy_rise_j;
    g.energy_source = EnergySource::Counter;
  } else if (a.power_mean_w) {
    g.energy_j = *a.power_mean_w * seconds;
    g.energy_source = EnergySource::Integrated;
  }
  if (a.sm_active_pct && a.flop_pct && a.occupancy_pct) {
    g.score = analyze::efficiency_score(*a.sm_active_pct / 100, *a.flop_pct / 100,
                                        *a.occupancy_pct / 100);
  }
  g.health_faults = static_cast<int>(std::llround(a.health_faults.value_or(0)));
  return g;
}

// The mean of `field` over the GPUs that have it; nullopt when none has.
template <typename Field>
std::optional<double> mean_of(const std::vector<SiteJobGpu>& gpus, Field field) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& g : gpus) {
    if (const auto& v = g.*field) {
      sum += *v;
      ++n;
    }
  }
  return n == 0 ? std::nullopt : std::optional<double>(sum / static_cast<double>(n));
}

// The activity balance and stragglers judge: SM active where every GPU has it, else utilization.
std::vector<double> activities(const std::vector<SiteJobGpu>& gpus) {
  const bool sm = std::all_of(gpus.begin(), gpus.end(),
                              [](const SiteJobGpu& g) { return g.sm_active_pct.has_value(); });
  std::vector<double> out;
  for (const auto& g : gpus) {
    const auto& v = sm ? g.sm_active_pct : g.util_pct;
    out.push_back(v ? *v / 100 : std::nan(""));
  }
  return out;
}

void flag(SiteJob& job, const FigureOptions& o) {
  const auto& gpus = job.gpu_rows;
  const auto idle = [&](const SiteJobGpu& g) {
    return g.idle_share && *g.idle_share >= o.idle_share;
  };
  if (std::any_of(gpus.begin(), gpus.end(), idle)) job.flags.push_back(JobFlag::IdleGpus);
  const auto activity = activities(gpus);
  const std::vector<double> seconds(gpus.size(), job.elapsed_s());
  if (gpus.size() > 1 &&
      !analyze::load_balance(activity, seconds, o.straggler_threshold).stragglers.empty()) {
    job.flags.push_back(JobFlag::Straggler);
  }
  bool small = !gpus.empty() && !std::all_of(gpus.begin(), gpus.end(), idle);
  for (std::size_t i = 0; i < gpus.size() && small; ++i) {
    const auto& g = gpus[i];
    small = g.peak_memory_bytes && g.memory_total_bytes && *g.memory_total_bytes > 0 &&
            *g.peak_memory_bytes <= o.too_large_memory_share * *g.memory_total_bytes &&
            !std::isnan(activity[i]) && activity[i] * 100 <= o.too_large_activity_pct;
  }
  if (small) job.flags.push_back(JobFlag::GpuTooLarge);
  if (std::any_of(gpus.begin(), gpus.end(),
                  [](const SiteJobGpu& g) { return g.health_faults > 0; })) {
    job.flags.push_back(JobFlag::HealthFault);
  }
}

void job_figures(SiteJob& job, const FigureOptions& o) {
  const auto& gpus = job.gpu_rows;
  const double hours = job.elapsed_s() / 3600;
  double idle = 0, energy = 0, peak = -1;
  bool any_idle = false, any_energy = false;
  for (const auto& g : gpus) {
    if (g.idle_share) {
      idle += *g.idle_share * hours;
      any_idle = true;
    }
    if (g.energy_j) {
      energy += *g.energy_j;
      any_energy = true;
    }
    if (g.peak_memory_bytes) peak = std::max(peak, *g.peak_memory_bytes);
  }
  if (any_idle) job.idle_gpu_hours = idle;
  if (any_energy) {
    job.energy_j = energy;
    job.co2_g = analyze::carbon_grams(energy, o.g_per_kwh, o.pue);
  }
  if (peak >= 0) job.peak_memory_bytes = peak;
  job.util_pct = mean_of(gpus, &SiteJobGpu::util_pct);
  job.sm_active_pct = mean_of(gpus, &SiteJobGpu::sm_active_pct);
  job.score = mean_of(gpus, &SiteJobGpu::score);
}

}  // namespace

void fill_figures(SiteJob& job, std::vector<GpuAggregate> gpus, const FigureOptions& options) {
  std::sort(gpus.begin(), gpus.end(), [](const GpuAggregate& a, const GpuAggregate& b) {
    return a.node != b.node ? a.node < b.node : a.key < b.key;
  });
  job.gpu_rows.clear();
  for (const auto& a : gpus) job.gpu_rows.push_back(gpu_row(a, job.elapsed_s()));
  if (job.gpu_rows.empty()) {
    job.source = JobSource::None;
    return;
  }
  job.source = JobSource::Tsdb;
  job_figures(job, options);
  flag(job, options);
  std::string model;
  for (const auto& g : job.gpu_rows) {
    if (model.empty()) model = g.model;
    if (!g.model.empty() && g.model != model) model.clear();
  }
  if (!model.empty()) job.gpu_model = model;
  const auto whole = std::count_if(job.gpu_rows.begin(), job.gpu_rows.end(),
                                   [](const SiteJobGpu& g) { return !g.mig_profile; });
  if (whole > 0 && whole < job.gpus) {
    job.notes.push_back(fmt::format("{} of the {} allocated GPUs have series", whole, job.gpus));
  }
  if (std::any_of(job.gpu_rows.begin(), job.gpu_rows.end(),
                  [](const SiteJobGpu& g) { return g.samples > 0 && !g.energy_j; })) {
    job.notes.push_back("the energy of some GPUs is unknown (no counter and no power series)");
  }
}

}  // namespace gpuscope::fleet
