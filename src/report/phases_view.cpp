#include "report/phases_view.hpp"

#include <fmt/format.h>

#include "report/analysis_view.hpp"
#include "util/text_table.hpp"

namespace gpuscope::report {

using analyze::Analysis;
using nlohmann::json;

namespace {

// A phase's time: µs and ms below a second, then as seconds_text.
std::string phase_time(double s) {
  if (s < 1e-3) return fmt::format("{:.0f} µs", s * 1e6);
  if (s < 1) return fmt::format("{:.0f} ms", s * 1e3);
  return seconds_text(s);
}

std::string opt_pct(const std::optional<double>& v) {
  return v ? fmt::format("{:.0f} %", *v) : "-";
}

std::string opt_energy(const std::optional<double>& j) {
  return j ? format_energy(*j) : "-";
}

// A phase's name (and which one), cut to 40 characters.
std::string phase_label(const std::string& name, const std::string& instance) {
  std::string out = instance.empty() ? name : name + " " + instance;
  if (out.size() > 40) out = out.substr(0, 39) + "…";
  return out;
}

nlohmann::json figures_json(const analyze::PhaseFigures& f) {
  json metrics = json::object();
  for (std::size_t m = 0; m < analyze::kPhaseMetrics.size(); ++m) {
    metrics[std::string(info(analyze::kPhaseMetrics[m]).name)] = opt(f.metrics[m]);
  }
  return {{"time_s", f.time_s},
          {"exclusive_time_s", f.exclusive_time_s},
          {"energy_j", opt(f.energy_j)},
          {"exclusive_energy_j", opt(f.exclusive_energy_j)},
          {"mean_power_w", opt(f.mean_power_w)},
          {"energy_share", opt(f.energy_share)},
          {"metrics", metrics}};
}

}  // namespace

// Per phase name: count, time, energy, share, power, saturation (nothing without phases).
std::string phases_text(const Analysis& a, const Style& style) {
  if (!a.phases || a.phases->names.empty()) return "";
  const auto& p = *a.phases;
  std::vector<std::vector<std::string>> rows;
  constexpr std::size_t kShown = 30;
  for (std::size_t i = 0; i < p.names.size() && i < kShown; ++i) {
    const auto& n = p.names[i];
    if (n.count == 0) {
      rows.push_back({phase_label(n.name, ""), n.source,
                      fmt::format("{} point{}", n.points, n.points == 1 ? "" : "s"), "-", "-", "-",
                      "-", "-", "-", "-", "-", "-"});
      continue;
    }
    const auto& t = n.total;
    const bool nested = t.exclusive_time_s + 1e-9 < t.time_s;
    rows.push_back({phase_label(n.name, "") + (n.unclosed > 0 ? style.warn("*") : ""), n.source,
                    std::to_string(n.count), phase_time(t.time_s),
                    nested ? phase_time(t.exclusive_time_s) : "", phase_time(n.mean_time_s),
                    n.count > 1 ? fmt::format("±{:.0f} %", 100 * n.time_cv) : "-",
                    opt_energy(t.energy_j), t.energy_share ? pct(*t.energy_share) : "-",
                    t.mean_power_w ? fmt::format("{:.0f} W", *t.mean_power_w) : "-",
                    opt_pct(t.metrics[0]), opt_pct(t.metrics[1])});
  }
  std::string out = "\n" + style.bold("Phases") + "\n";
  out += table({"phase", "source", "count", "time", "own time", "mean", "spread", "energy",
                "of job", "power", "SM active", "tensor"},
               rows, style);
  std::size_t unclosed = 0;
  for (const auto& n : p.names) unclosed += n.unclosed;
  if (unclosed > 0) {
    out += style.dim(fmt::format("* {} never ended: counted up to the end of their process or "
                                 "the job",
                                 unclosed)) +
           "\n";
  }
  if (p.names.size() > kShown) {
    out += style.dim(fmt::format("… and {} more names (--json lists them all)",
                                 p.names.size() - kShown)) +
           "\n";
  }
  out += style.dim(fmt::format("{} instances covering {} of the run; --aggregate phases lists "
                               "each",
                               p.instance_count, seconds_text(p.covered_time_s))) +
         "\n";
  return out;
}

// Every instance (at most max_phase_instances), in start order, indented by nesting depth.
std::string phase_instances_text(const Analysis& a, const Style& style) {
  if (!a.phases || a.phases->instances.empty()) return "\n  no phases in these runs\n";
  const auto& p = *a.phases;
  std::vector<std::vector<std::string>> rows;
  for (const auto& i : p.instances) {
    const auto& f = i.figures;
    rows.push_back({std::string(static_cast<std::size_t>(2 * i.depth), ' ') +
                        phase_label(i.name, i.instance) + (i.closed ? "" : style.warn("*")),
                    fmt::format("{:.3f}", i.start_s), phase_time(f.time_s), opt_energy(f.energy_j),
                    f.energy_share ? pct(*f.energy_share) : "-",
                    f.mean_power_w ? fmt::format("{:.0f} W", *f.mean_power_w) : "-",
                    opt_pct(f.metrics[0]), opt_pct(f.metrics[1]), opt_pct(f.metrics[2])});
  }
  std::string out = "\n" + style.bold("Phase instances") + "\n";
  out += table(
      {"phase", "start (s)", "time", "energy", "of job", "power", "SM active", "tensor", "DRAM"},
      rows, style);
  if (p.instance_count > p.instances.size()) {
    out +=
        style.dim(fmt::format("… the first {} of {}", p.instances.size(), p.instance_count)) + "\n";
  }
  return out;
}

nlohmann::json phases_json(const Analysis& a) {
  if (!a.phases) return nullptr;
  const auto& p = *a.phases;
  json names = json::array();
  for (const auto& n : p.names) {
    json gpu_energy = json::array();
    for (const auto& e : n.gpu_energy_j) gpu_energy.push_back(opt(e));
    names.push_back({{"name", n.name},
                     {"source", n.source},
                     {"count", n.count},
                     {"points", n.points},
                     {"unclosed", n.unclosed},
                     {"mean_time_s", n.mean_time_s},
                     {"median_time_s", n.median_time_s},
                     {"min_time_s", n.min_time_s},
                     {"max_time_s", n.max_time_s},
                     {"time_cv", n.time_cv},
                     {"mean_energy_j", opt(n.mean_energy_j)},
                     {"energy_per_unit_j", opt(n.energy_per_unit_j)},
                     {"total", figures_json(n.total)},
                     {"gpu_energy_j", gpu_energy}});
  }
  json instances = json::array();
  for (const auto& i : p.instances) {
    instances.push_back({{"name", i.name},
                         {"instance", i.instance},
                         {"source", i.source},
                         {"run", i.run},
                         {"start_s", i.start_s},
                         {"end_s", i.end_s},
                         {"closed", i.closed},
                         {"depth", i.depth},
                         {"figures", figures_json(i.figures)}});
  }
  return {{"names", names},
          {"instances", instances},
          {"instance_count", p.instance_count},
          {"point_count", p.point_count},
          {"covered_time_s", p.covered_time_s}};
}

std::string phases_csv(const Analysis& a) {
  auto num = [](double v) { return fmt::format("{}", v); };
  // One row per phase instance (the first max_phase_instances), in start order.
  std::string out =
      "name,instance,source,run,start_s,end_s,closed,depth,time_s,exclusive_time_s,energy_j,"
      "exclusive_energy_j,mean_power_w,energy_share,sm_active_pct,tensor_active_pct,"
      "dram_active_pct\n";
  if (!a.phases) return out;
  auto opt_num = [&num](const std::optional<double>& v) { return v ? num(*v) : std::string(); };
  for (const auto& i : a.phases->instances) {
    const auto& f = i.figures;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       util::csv_field(i.name), util::csv_field(i.instance), i.source, i.run,
                       num(i.start_s), num(i.end_s), i.closed ? 1 : 0, i.depth, num(f.time_s),
                       num(f.exclusive_time_s), opt_num(f.energy_j), opt_num(f.exclusive_energy_j),
                       opt_num(f.mean_power_w), opt_num(f.energy_share), opt_num(f.metrics[0]),
                       opt_num(f.metrics[1]), opt_num(f.metrics[2]));
  }
  return out;
}

}  // namespace gpuscope::report
