#include "analyze/findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "analyze/health.hpp"
#include "core/metrics.hpp"
#include "core/vendor.hpp"

namespace gpuscope::analyze {
namespace {

std::optional<double> overall_mean(const Analysis& a, Metric m) {
  const auto& o = a.over_both[static_cast<std::size_t>(m)];
  return o ? std::optional<double>(o->mean) : std::nullopt;
}

std::string duration_words(double seconds) {
  if (seconds >= 3600) return fmt::format("{:.1f} GPU-hours", seconds / 3600);
  if (seconds >= 60) return fmt::format("{:.0f} GPU-minutes", seconds / 60);
  return fmt::format("{:.1f} GPU-seconds", seconds);
}

bool several_hosts(const Analysis& a) {
  for (const auto& g : a.gpus) {
    const auto& first = a.gpus.front().key;
    if (g.key.where() != first.where() || g.key.rank != first.rank) return true;
  }
  return false;
}

void idle_edges(const Analysis& a, std::vector<Finding>& out) {
  if (a.window.leading_trimmed_s > 0) {
    out.push_back(
        {"idle_start",
         fmt::format("the first {:.0f} s were idle (data loading or set-up?) and are left "
                     "out of the statistics",
                     a.window.leading_trimmed_s)});
  }
  if (a.window.trailing_trimmed_s > 0) {
    out.push_back({"idle_end", fmt::format("the last {:.0f} s were idle (checkpointing or "
                                           "shutdown?) and are left out of the statistics",
                                           a.window.trailing_trimmed_s)});
  }
}

void stragglers(const Analysis& a, std::vector<Finding>& out) {
  const bool hosts = several_hosts(a);
  // Whole GPUs against the median GPU; MIG instances against the median instance, each by its
  // activity as a fraction of its own instance.
  for (const auto* balance : {&a.balance, &a.mig_balance}) {
    if (!*balance) continue;
    const bool mig = balance == &a.mig_balance;
    for (const auto& s : (*balance)->stragglers) {
      const GpuReport& g = a.gpus[s.index];
      // A MIG GPU's instances often hold different jobs: a quiet one is imbalance only when
      // they share one job's work.
      out.push_back(
          {"straggler",
           mig ? fmt::format("{} was {:.0f} % less active than the median MIG instance, about {} "
                             "idle: load imbalance if the instances share one job's work (else "
                             "a smaller instance would do)",
                             g.key.label(hosts), 100 * s.below_median,
                             duration_words(s.gpu_seconds_lost))
               : fmt::format("{} was {:.0f} % less active than the median GPU: load imbalance, "
                             "about {} idle",
                             g.key.label(hosts), 100 * s.below_median,
                             duration_words(s.gpu_seconds_lost))});
    }
  }
}

// MIG instances gone or appeared, MIG mode changed: what was sampled changed under the run.
void mig_changes(const Analysis& a, std::vector<Finding>& out) {
  for (const auto& c : a.mig_changes) {
    out.push_back(
        {"mig_changed", fmt::format("{}{} (at {:.1f} s)", c.where.empty() ? "" : c.where + ": ",
                                    c.detail, c.t_s)});
  }
}

void activity(const Analysis& a, std::vector<Finding>& out) {
  const auto sm = overall_mean(a, Metric::SmActivePct);
  const auto util = overall_mean(a, Metric::GpuUtilPct);
  if (sm && *sm < 50) {
    std::string text = fmt::format("SMs were active only {:.0f} % of the time", *sm);
    if (util && *util > *sm + 30) {
      text += fmt::format(
          " although utilization reads {:.0f} %: kernels run but leave most SMs "
          "idle (small kernels, launch overhead, or waiting in communication)",
          *util);
    } else {
      text += ": the GPUs often wait (input pipeline, CPU work, synchronisation)";
    }
    out.push_back({"low_sm_activity", text});
  } else if (!sm && util && *util < 50) {
    // What the column holds depends on the GPUs' vendor (the metric catalog's meanings): named
    // so where every GPU is of one vendor.
    std::optional<Vendor> vendor;
    if (!a.gpus.empty()) vendor = a.gpus[0].key.vendor;
    const bool one_vendor = std::all_of(a.gpus.begin(), a.gpus.end(),
                                        [&](const auto& g) { return g.key.vendor == vendor; });
    std::string name(metric_meaning(Metric::GpuUtilPct, one_vendor ? vendor : std::nullopt)->name);
    if (!name.empty() && name[0] >= 'a' && name[0] <= 'z')
      name[0] = static_cast<char>(name[0] - 'a' + 'A');
    out.push_back(
        {"low_utilization", fmt::format("{} averaged {:.0f} %: the GPUs often wait", name, *util)});
  }
  const auto tensor = overall_mean(a, Metric::TensorActivePct);
  const auto fp32 = overall_mean(a, Metric::Fp32ActivePct);
  if (tensor && fp32 && *tensor < 5 && *fp32 > 20) {
    out.push_back({"no_tensor_cores",
                   fmt::format("tensor cores idle ({:.0f} %) while FP32 is busy ({:.0f} %): mixed "
                               "precision (bf16/fp16, or TF32) could help",
                               *tensor, *fp32)});
  }
  const auto dram = overall_mean(a, Metric::DramActivePct);
  if (dram && *dram > 60 && (!tensor || *tensor < 30)) {
    out.push_back({"memory_bound", fmt::format("memory bandwidth is {:.0f} % used on average: the "
                                               "work is memory-bound; fusing kernels or larger "
                                               "batches raise arithmetic intensity",
                                               *dram)});
  }
  // Tensor-core GEMMs keep few, large warps per SM by design: a bf16 8192³ product at 694
  // TFLOP/s on an H200 read 14 % occupancy with tensor cores 94 % active (docs/validation.md).
  // Low occupancy says something only while the tensor cores are not what keeps the SMs busy.
  // Both are judged per unit of SM activity, so that idle stretches left in the window (a
  // warm-up longer than the trimming takes) do not pass a GEMM off as a scalar kernel.
  const auto occupancy = overall_mean(a, Metric::SmOccupancyPct);
  if (occupancy && sm && *sm >= 50) {
    const double busy_occupancy = 100 * *occupancy / *sm;
    const bool tensor_led = tensor && *tensor / *sm >= 0.5;
    if (busy_occupancy < 20 && !tensor_led) {
      out.push_back(
          {"low_occupancy", fmt::format("SM occupancy is low ({:.0f} % while the SMs are active): "
                                        "kernels launch few warps (small blocks, heavy register or "
                                        "shared-memory use)",
                                        busy_occupancy)});
    }
  }
}

void power(const Analysis& a, std::vector<Finding>& out) {
  double capped = 0, thermal = 0, observed = 0;
  for (const auto& g : a.gpus) {
    if (!g.energy.throttle) continue;
    capped += g.energy.throttle->seconds[0];
    thermal += g.energy.throttle->seconds[1];
    observed += g.energy.throttle->observed_s;
  }
  if (observed > 0 && capped / observed > 0.10) {
    out.push_back({"power_capped",
                   fmt::format("power-capped {:.0f} % of the time: the GPUs ran at their power "
                               "limit and lowered clocks",
                               100 * capped / observed)});
  }
  if (observed > 0 && thermal / observed > 0.01) {
    out.push_back({"thermal", fmt::format("thermally throttled {:.1f} % of the time: check cooling "
                                          "and airflow",
                                          100 * thermal / observed)});
  }
  if (a.energy_counter_j && a.energy_integrated_j && *a.energy_counter_j > 0) {
    const double diff = (*a.energy_integrated_j - *a.energy_counter_j) / *a.energy_counter_j;
    if (std::fabs(diff) > 0.10) {
      out.push_back({"energy_mismatch",
                     fmt::format("integrated power differs from the energy counter by {:+.0f} %: "
                                 "sampled power misses short peaks; the counter is the figure to "
                                 "trust",
                                 100 * diff)});
    }
  }
}

std::string time_words(double s) {
  if (s >= 120) return fmt::format("{:.1f} min", s / 60);
  if (s >= 1) return fmt::format("{:.1f} s", s);
  return fmt::format("{:.0f} ms", s * 1000);
}

// Phases that cost energy while the SMs waited, and phases whose time varies between instances
// (thresholds in docs/phases.md).
void phases(const Analysis& a, std::vector<Finding>& out) {
  if (!a.phases) return;
  for (const auto& n : a.phases->names) {
    const auto& t = n.total;
    if (n.count == 0 || !t.energy_share || !t.metrics[0]) continue;
    if (*t.energy_share >= kPhaseEnergyShare && *t.metrics[0] < kPhaseIdleSmActivePct) {
      out.push_back(
          {"phase_waiting",
           fmt::format("{} took {:.0f} % of the energy with the SMs {:.0f} % active ({} × {}): "
                       "the GPUs waited through it; overlap it with compute (asynchronous "
                       "checkpoints, prefetching) or shorten it",
                       n.name, 100 * *t.energy_share, *t.metrics[0], n.count,
                       time_words(n.mean_time_s))});
    }
  }
  for (const auto& n : a.phases->names) {
    if (n.count < kPhaseVariationMinCount || n.time_cv < kPhaseVariationCv) continue;
    std::string where;
    for (const auto& [first, last] : n.slow_stretches) {
      where += where.empty() ? "" : ", ";
      where += first == last ? first : first + "–" + last;
    }
    out.push_back(
        {"phase_time_varies",
         fmt::format("{} time varies ±{:.0f} % ({} to {}, median {}){}", n.name, 100 * n.time_cv,
                     time_words(n.min_time_s), time_words(n.max_time_s),
                     time_words(n.median_time_s),
                     where.empty() ? std::string()
                                   : fmt::format(": slowest in {} {} (stragglers, data stalls, "
                                                 "or a periodic task)",
                                                 n.name, where))});
  }
}

}  // namespace

std::vector<Finding> diagnose(const Analysis& a) {
  // "My code or the hardware?" first: a faulty GPU explains everything after it.
  std::vector<Finding> out = health_findings(a);
  mig_changes(a, out);
  stragglers(a, out);
  idle_edges(a, out);
  activity(a, out);
  power(a, out);
  phases(a, out);
  if (a.score) {
    out.push_back({"efficiency_score",
                   fmt::format("efficiency score {:.2f} (median {:.2f}; 0 idle … 1 saturated; "
                               "compare runs of the same workload only)",
                               a.score->mean, a.score->median)});
  }
  return out;
}

}  // namespace gpuscope::analyze
