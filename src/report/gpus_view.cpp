#include "report/gpus_view.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/vendor.hpp"
#include "report/analysis_view.hpp"
#include "report/mig_view.hpp"

namespace gpuscope::report {

using analyze::Analysis;
using nlohmann::json;

namespace {

// A GPU's energy and average power cells: measured, or for a MIG instance its estimate ("est.").
std::pair<std::string, std::string> energy_cells(const analyze::GpuReport& g) {
  const auto& e = g.energy;
  if (g.key.mig) {
    if (!g.estimated) return {"-", "-"};
    return {"est. " + format_energy(g.estimated->energy_j),
            g.estimated->power_w ? fmt::format("est. {:.0f} W", *g.estimated->power_w) : "-"};
  }
  return {e.counter_j      ? format_energy(*e.counter_j)
          : e.integrated_j ? "≈" + format_energy(*e.integrated_j)
                           : "-",
          e.average_power_w ? fmt::format("{:.0f} W", *e.average_power_w) : "-"};
}

std::string peak_memory(const analyze::GpuReport& g) {
  const auto& m = g.over_time[static_cast<std::size_t>(Metric::MemoryUsedBytes)];
  return m ? format_value(Metric::MemoryUsedBytes, m->max) + " GiB" : "-";
}

}  // namespace

// Each GPU a row; a MIG instance indented under its parent, compared with the median instance.
std::string gpus_text(const Analysis& a, const Style& style) {
  const bool hosts = several_hosts(a);
  const bool mig = has_mig_instances(a);
  std::vector<std::vector<std::string>> rows;
  for (const std::size_t i : gpu_display_order(a)) {
    const auto& g = a.gpus[i];
    const auto& e = g.energy;
    const auto& balance = g.key.mig ? a.mig_balance : a.balance;
    const double median = balance ? balance->median : 0;
    std::string vs = "-";
    if (g.activity && median > 0) {
      const double diff = std::round(100 * (*g.activity / median - 1));
      vs = diff == 0 ? "0 %" : fmt::format("{:+.0f} %", diff);  // never "-0 %"
    }
    auto [energy, power] = energy_cells(g);
    rows.push_back({(g.key.mig ? "  └ " : "") + g.key.label(hosts),
                    g.activity ? pct(*g.activity) : "-", vs, std::move(energy), std::move(power),
                    e.peak_power_w ? fmt::format("{:.0f} W", *e.peak_power_w) : "-",
                    e.power_limit_w ? fmt::format("{:.0f} W", *e.power_limit_w) : "-",
                    g.score ? fmt::format("{:.2f}", g.score->mean) : "-"});
    if (mig) rows.back().insert(rows.back().begin() + 3, peak_memory(g));
  }
  std::vector<std::string> header = {"GPU",       "activity", "vs median", "energy",
                                     "avg power", "peak",     "limit",     "score"};
  if (mig) header.insert(header.begin() + 3, "peak memory");
  std::string out = "\n" + style.bold("Per GPU") + "\n";
  out += table(header, rows, style);
  if (a.balance) {
    out += fmt::format("balance: max/mean {:.2f}, coefficient of variation {:.2f}\n",
                       a.balance->max_over_mean, a.balance->cv);
  }
  if (mig) out += style.dim(mig_table_notes(a, hosts));
  return out;
}

json gpus_json(const Analysis& a) {
  json gpus = json::array();
  for (const auto& g : a.gpus) {
    json over_time = json::object();
    for (const auto& m : kMetrics) {
      if (!analyze::summarised(m.id)) continue;
      const auto& s = g.over_time[static_cast<std::size_t>(m.id)];
      over_time[std::string(m.name)] = s ? summary_json(*s) : json(nullptr);
    }
    json throttle = nullptr;
    if (g.energy.throttle) {
      throttle = {{"observed_s", g.energy.throttle->observed_s},
                  {"any_s", g.energy.throttle->any_s}};
      for (std::size_t k = 0; k < analyze::kThrottleReasonCount; ++k) {
        throttle[std::string(analyze::kThrottleReasonNames[k])] = g.energy.throttle->seconds[k];
      }
    }
    gpus.push_back(
        {{"run", g.key.run_id},
         {"host", g.key.host},
         {"run_label", g.key.run_label},
         {"rank", opt(g.key.rank)},
         {"index", g.key.device_index},
         {"uuid", g.key.uuid},
         {"name", g.key.name},
         {"vendor", std::string(vendor_word(g.key.vendor))},
         {"samples", g.samples},
         {"covered_s", g.covered_s},
         {"activity", opt(g.activity)},
         {"activity_metric", g.activity_metric},
         {"saturation_source", opt(g.key.saturation_source)},
         {"score", g.score ? summary_json(*g.score) : json(nullptr)},
         {"energy_j",
          {{"counter", opt(g.energy.counter_j)}, {"integrated", opt(g.energy.integrated_j)}}},
         {"average_power_w", opt(g.energy.average_power_w)},
         {"carbon_g", opt(g.energy.carbon_g)},
         {"peak_power_w", opt(g.energy.peak_power_w)},
         {"power_limit_w", opt(g.energy.power_limit_w)},
         {"throttle_s", throttle},
         {"over_time", over_time},
         {"label", g.key.label(several_hosts(a))}});
    add_mig_json(g, gpus.back());
  }
  return gpus;
}

json balance_json(const std::optional<analyze::Balance>& b) {
  json balance = nullptr;
  if (b) {
    json stragglers = json::array();
    for (const auto& s : b->stragglers) {
      stragglers.push_back({{"gpu", s.index},
                            {"below_median", s.below_median},
                            {"gpu_seconds_lost", s.gpu_seconds_lost}});
    }
    balance = {{"mean", b->mean},
               {"median", b->median},
               {"max_over_mean", b->max_over_mean},
               {"cv", b->cv},
               {"stragglers", stragglers}};
  }
  return balance;
}

}  // namespace gpuscope::report
