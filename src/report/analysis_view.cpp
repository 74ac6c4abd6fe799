#include "report/analysis_view.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

#include "core/error.hpp"
#include "report/energy_view.hpp"
#include "report/findings_view.hpp"
#include "report/gpus_view.hpp"
#include "report/health_view.hpp"
#include "report/node_energy_view.hpp"
#include "report/overall_view.hpp"
#include "report/phases_view.hpp"
#include "report/processes_view.hpp"
#include "report/runs_view.hpp"
#include "report/space_view.hpp"
#include "report/time_view.hpp"

namespace gpuscope::report {
namespace {

using analyze::Analysis;

constexpr Metric kDefaultMetrics[] = {
    Metric::PowerW,          Metric::GpuUtilPct,      Metric::SmActivePct,   Metric::SmOccupancyPct,
    Metric::TensorActivePct, Metric::Fp32ActivePct,   Metric::DramActivePct, Metric::TemperatureC,
    Metric::SmClockMhz,      Metric::MemoryUsedBytes,
};

}  // namespace

std::string format_energy(double j) {
  if (std::fabs(j) >= 3.6e6) return fmt::format("{:.2f} kWh", j / 3.6e6);
  if (std::fabs(j) >= 1e6) return fmt::format("{:.2f} MJ", j / 1e6);
  if (std::fabs(j) >= 1e3) return fmt::format("{:.1f} kJ", j / 1e3);
  return fmt::format("{:.0f} J", j);
}

std::string format_value(Metric m, double v) {
  const std::string_view unit = info(m).unit;
  if (unit == "B") return fmt::format("{:.1f}", v / (1024.0 * 1024 * 1024));
  if (unit == "B/s") return fmt::format("{:.2f}", v / 1e9);
  if (unit == "%") return fmt::format("{:.1f}", v);
  if (unit == "MHz") return fmt::format("{:.0f}", v);
  return fmt::format("{:.1f}", v);
}

View parse_view(const std::string& text) {
  if (text == "summary" || text == "both") return View::Summary;
  if (text == "time") return View::Time;
  if (text == "space") return View::Space;
  if (text == "all") return View::All;
  if (text == "carbon") return View::Carbon;
  if (text == "phases") return View::Phases;
  if (text == "node") return View::Node;
  throw Error::usage(fmt::format("unknown --aggregate '{}'", text), {},
                     "use summary (over both GPUs and time), time (per GPU), space (across GPUs "
                     "over time), all, carbon (per grid intensity period) phases (per phase "
                     "instance) or node (the node's CPU and memory energy beside the GPUs')");
}

std::vector<Metric> parse_metrics(const std::vector<std::string>& names) {
  std::vector<Metric> out;
  if (names.empty()) return {std::begin(kDefaultMetrics), std::end(kDefaultMetrics)};
  for (const auto& name : names) {
    if (name == "all") {
      for (const auto& m : kMetrics) {
        if (analyze::summarised(m.id)) out.push_back(m.id);
      }
      continue;
    }
    auto metric = metric_by_name(name);
    if (!metric) {
      throw Error::usage(fmt::format("unknown metric '{}'", name), {},
                         "names are the samples columns of docs/database.md, e.g. power_w, "
                         "sm_active_pct; or all");
    }
    if (!analyze::summarised(*metric)) {
      throw Error::usage(
          fmt::format("{} is a {} and has no level to aggregate", name,
                      info(*metric).kind == MetricKind::Counter ? "counter" : "bitmask"),
          {}, "energy appears in the energy section; throttling in the diagnosis");
    }
    out.push_back(*metric);
  }
  return out;
}

std::string analysis_text(const Analysis& a, View view, const std::vector<Metric>& metrics,
                          bool color) {
  const Style style{color};
  std::string out = runs_text(a, style);
  if (view == View::Summary || view == View::All) {
    out += overall_text(a, style) + gpus_text(a, style) + energy_text(a, style) +
           node_energy_text(a, style.color) + phases_text(a, style) + processes_text(a, style) +
           health_text(a, style.color);
  }
  if (view == View::Phases) out += phases_text(a, style) + phase_instances_text(a, style);
  if (view == View::Carbon) out += energy_text(a, style) + node_energy_text(a, style.color);
  if (view == View::Node) out += node_energy_text(a, style.color);
  if (view == View::Time || view == View::All) out += time_text(a, metrics, style);
  if (view == View::Space || view == View::All) out += space_text(a, metrics, style);
  out += findings_text(a, style);
  return out;
}

nlohmann::json analysis_json(const Analysis& a) {
  return {
      {"schema", "gpuscope-analysis/1"},
      {"inputs", a.inputs},
      {"runs", runs_json(a)},
      {"duration_s", a.duration_s},
      {"window",
       {{"start_s", a.window.start_s},
        {"end_s", a.window.end_s},
        {"leading_trimmed_s", a.window.leading_trimmed_s},
        {"trailing_trimmed_s", a.window.trailing_trimmed_s},
        {"mode", a.window.mode}}},
      {"resolution_s", a.resolution_s},
      {"over_both", overall_json(a)},
      {"efficiency_score", score_json(a)},
      {"gpus", gpus_json(a)},
      {"over_space", space_json(a)},
      {"balance", balance_json(a.balance)},
      {"mig_balance", balance_json(a.mig_balance)},
      {"energy_j", energy_json(a)},
      {"work", work_json(a)},
      {"carbon", carbon_json(a)},
      {"node_energy", node_energy_json(a)},
      {"processes", processes_json(a)},
      {"phases", phases_json(a)},
      {"health", health_json(a)},
      {"findings", findings_json(a)},
      {"notes", a.notes},
  };
}

std::string analysis_csv(const Analysis& a, View view, const std::vector<Metric>& metrics) {
  if (view == View::Node) return node_energy_csv(a);
  if (view == View::Carbon) return carbon_csv(a);
  if (view == View::Phases) return phases_csv(a);
  if (view == View::Time) return time_csv(a, metrics);
  if (view == View::Space) return space_csv(a, metrics);
  return overall_csv(a);
}

}  // namespace gpuscope::report
