#include "report/analysis_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>

#include "analyze/processes.hpp"
#include "core/error.hpp"
#include "report/health_view.hpp"
#include "report/mig_view.hpp"
#include "report/node_energy_view.hpp"
#include "util/text_table.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::report {
namespace {

using analyze::Analysis;

constexpr Metric kDefaultMetrics[] = {
    Metric::PowerW,          Metric::GpuUtilPct,      Metric::SmActivePct,   Metric::SmOccupancyPct,
    Metric::TensorActivePct, Metric::Fp32ActivePct,   Metric::DramActivePct, Metric::TemperatureC,
    Metric::SmClockMhz,      Metric::MemoryUsedBytes,
};

struct Style {
  bool color;
  std::string bold(const std::string& s) const { return color ? "\033[1m" + s + "\033[0m" : s; }
  std::string warn(const std::string& s) const { return color ? "\033[33m" + s + "\033[0m" : s; }
  std::string dim(const std::string& s) const { return color ? "\033[2m" + s + "\033[0m" : s; }
};

bool several_hosts(const Analysis& a) {
  for (const auto& g : a.gpus) {
    const auto& first = a.gpus.front().key;
    if (g.key.where() != first.where() || g.key.rank != first.rank) return true;
  }
  return false;
}

std::string pct(double fraction) {
  return fmt::format("{:.0f} %", 100 * fraction);
}

std::string seconds_text(double s) {
  if (s >= 3600) return fmt::format("{:.2f} h", s / 3600);
  if (s >= 120) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.1f} s", s);
}

// A table with left-aligned first column and right-aligned others, widths fitted to content.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, const Style& style) {
  const auto text = util::render_table(header, rows, {{util::Align::Left}, false});
  return style.bold(text.header) + text.body;
}

// The unit values are shown in (bytes as GiB, rates as GB/s).
std::string unit_of(Metric m) {
  const std::string_view unit = info(m).unit;
  if (unit == "B") return "GiB";
  if (unit == "B/s") return "GB/s";
  return std::string(unit);
}

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

namespace {

// " rank 3/8 (openmpi, local 1)", " rank 3", or "" outside a parallel job; " · pod ns/name".
std::string rank_text(const analyze::RunMeta& r) {
  std::string out;
  if (r.rank) {
    out += fmt::format(" rank {}", *r.rank);
    if (r.world_size) out += fmt::format("/{}", *r.world_size);
    std::string detail = r.launcher.value_or("");
    if (r.local_rank)
      detail += fmt::format("{}local {}", detail.empty() ? "" : ", ", *r.local_rank);
    if (!detail.empty()) out += " (" + detail + ")";
  }
  if (r.pod_name) {
    out += fmt::format(" · pod {}{}", r.pod_namespace ? *r.pod_namespace + "/" : "", *r.pod_name);
  }
  return out;
}

std::string header_text(const Analysis& a, const Style& style) {
  std::size_t instances = 0;
  for (const auto& g : a.gpus) instances += g.key.mig ? 1U : 0U;
  const std::size_t gpus = a.gpus.size() - instances;
  const std::string mig =
      instances == 0 ? ""
                     : fmt::format(" · {} MIG instance{}", instances, instances == 1 ? "" : "s");
  std::string out = style.bold(fmt::format("gpuscope analysis · {} run{} · {} GPU{}{} · {}",
                                           a.runs.size(), a.runs.size() == 1 ? "" : "s", gpus,
                                           gpus == 1 ? "" : "s", mig, seconds_text(a.duration_s)));
  out += "\n";
  for (const auto& r : a.runs) {
    const std::string where = r.host + rank_text(r);
    std::string line = fmt::format("  {}{}{} · {}", where, where.empty() ? "" : ": ",
                                   r.command_line.empty() ? "-" : r.command_line, r.status);
    if (r.exit_code) line += fmt::format(" (exit {})", *r.exit_code);
    if (!r.label.empty()) line += " · " + r.label;
    if (r.scenario) line += " · simulated: " + *r.scenario;
    if (r.origin) line += " · from " + *r.origin;
    out += style.dim(line) + "\n";
    if (a.runs.size() > 8 && &r == &a.runs[7]) {
      out += style.dim(fmt::format("  … and {} more runs", a.runs.size() - 8)) + "\n";
      break;
    }
  }
  // What the runs' data lacks, each sentence once however many runs recorded it.
  std::vector<std::string> problems;
  for (const auto& r : a.runs) {
    for (const auto& p : r.problems) {
      if (std::find(problems.begin(), problems.end(), p) == problems.end()) problems.push_back(p);
    }
  }
  for (std::size_t i = 0; i < problems.size() && i < 6; ++i) {
    out += style.dim("  ! " + problems[i]) + "\n";
  }
  if (problems.size() > 6) {
    out += style.dim(
               fmt::format("  ! … and {} more (analyze --json lists them)", problems.size() - 6)) +
           "\n";
  }
  const auto& w = a.window;
  if (w.leading_trimmed_s > 0 || w.trailing_trimmed_s > 0) {
    out += fmt::format(
        "statistics over {:.1f}–{:.1f} s: {:.1f} s idle cut at the start, {:.1f} s "
        "at the end (--detect-outliers {})\n",
        w.start_s, w.end_s, w.leading_trimmed_s, w.trailing_trimmed_s, w.mode);
  }
  return out;
}

std::string summary_text(const Analysis& a, const Style& style) {
  std::vector<std::vector<std::string>> rows;
  bool estimated = false;  // a median from the quantile sketch is marked "≈"
  auto median_text = [&](bool exact, std::string text) {
    estimated = estimated || !exact;
    return exact ? text : "≈" + text;
  };
  for (const auto& m : kMetrics) {
    const auto& o = a.over_both[static_cast<std::size_t>(m.id)];
    if (!o) continue;
    rows.push_back({std::string(m.name), unit_of(m.id), format_value(m.id, o->mean),
                    median_text(o->median_exact, format_value(m.id, o->median)),
                    format_value(m.id, o->min), format_value(m.id, o->max)});
  }
  if (a.score) {
    rows.push_back({"efficiency_score", "0–1", fmt::format("{:.3f}", a.score->mean),
                    median_text(a.score->median_exact, fmt::format("{:.3f}", a.score->median)),
                    fmt::format("{:.3f}", a.score->min), fmt::format("{:.3f}", a.score->max)});
  }
  std::string out = "\n" + style.bold("Over all GPUs and time") + "\n";
  if (rows.empty()) return out + "  no metric has values in the analysed window\n";
  out += table({"metric", "unit", "mean", "median", "min", "max"}, rows, style);
  if (estimated) {
    out += style.dim(
               "≈ median estimated within 0.1 % (too many distinct values to count); "
               "the others are exact") +
           "\n";
  }
  return out;
}

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

// "2026-11-25 13:30" (UTC), for a period's edge; with seconds when it has them.
std::string utc_minute(std::int64_t wall_ns) {
  const bool whole_minute = wall_ns % 60'000'000'000 == 0;
  return util::utc_text(wall_ns, whole_minute ? "%Y-%m-%d %H:%M" : "%Y-%m-%d %H:%M:%S");
}

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

// Who a process was, in one cell: its container, pod, SLURM job or rank.
std::string process_where(const GpuProcess& p) {
  std::string out;
  for (const auto& part : analyze::workload_parts(p)) out += (out.empty() ? "" : ", ") + part;
  return out.empty() ? "-" : out;
}

std::string memory_text(std::optional<std::uint64_t> bytes) {
  if (!bytes) return "-";
  const double mib = static_cast<double>(*bytes) / (1024.0 * 1024.0);
  return mib >= 1024 ? fmt::format("{:.1f} GiB", mib / 1024) : fmt::format("{:.0f} MiB", mib);
}

// Which processes used each GPU (nothing when the runs recorded none).
std::string processes_text(const Analysis& a, const Style& style) {
  if (a.processes.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  constexpr std::size_t kShown = 40;
  for (std::size_t i = 0; i < a.processes.size() && i < kShown; ++i) {
    const auto& u = a.processes[i];
    const auto& p = u.process;
    const std::string job = !p.in_job ? "-" : (*p.in_job ? "yes" : style.warn("no"));
    rows.push_back({u.gpu, std::to_string(p.pid), p.command.value_or("?"), p.user.value_or("-"),
                    process_where(p), job, memory_text(u.peak_memory_bytes),
                    u.mean_sm_percent ? fmt::format("{:.0f} %", *u.mean_sm_percent) : "-",
                    seconds_text(u.last_s - u.first_s)});
  }
  std::string out = "\n" + style.bold("Processes on the GPUs") + "\n";
  out += table({"GPU", "pid", "command", "user", "container / pod / job", "in job", "peak mem",
                "SM", "seen"},
               rows, style);
  if (a.processes.size() > kShown) {
    out += style.dim(
               fmt::format("… and {} more (--json lists them all)", a.processes.size() - kShown)) +
           "\n";
  }
  return out;
}

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

std::string findings_text(const Analysis& a, const Style& style) {
  std::string out = "\n" + style.bold("Diagnosis") + "\n";
  if (a.findings.empty()) out += "  nothing stands out\n";
  for (const auto& f : a.findings) out += "  " + style.warn("•") + " " + f.text + "\n";
  for (const auto& n : a.notes) out += "  " + style.dim("note: " + n) + "\n";
  return out;
}

std::string time_text(const Analysis& a, const std::vector<Metric>& metrics, const Style& style) {
  const bool hosts = several_hosts(a);
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : a.gpus) {
    for (Metric m : metrics) {
      const auto& s = g.over_time[static_cast<std::size_t>(m)];
      if (!s) {
        rows.push_back({g.key.label(hosts), std::string(info(m).name), unit_of(m), "not supported",
                        "", "", "", ""});
        continue;
      }
      rows.push_back({g.key.label(hosts), std::string(info(m).name), unit_of(m),
                      format_value(m, s->mean), format_value(m, s->median), format_value(m, s->p5),
                      format_value(m, s->p95), format_value(m, s->max)});
    }
  }
  return "\n" + style.bold("Per GPU over time") + "\n" +
         table({"GPU", "metric", "unit", "mean", "median", "p5", "p95", "max"}, rows, style);
}

std::string space_text(const Analysis& a, const std::vector<Metric>& metrics, const Style& style) {
  const bool hosts = several_hosts(a);
  std::string out;
  for (Metric m : metrics) {
    const auto& series = a.over_space[static_cast<std::size_t>(m)];
    out += "\n" +
           style.bold(fmt::format("{} across GPUs over time ({})", info(m).name, unit_of(m))) +
           "\n";
    if (series.empty()) {
      out += "  not supported on these GPUs\n";
      continue;
    }
    // At most 30 rows on a terminal: neighbouring grid points are merged (CSV has them all).
    const std::size_t step = (series.size() + 29) / 30;
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < series.size(); i += step) {
      double sum = 0, lo = series[i].min, hi = series[i].max;
      std::size_t lo_gpu = series[i].min_gpu, hi_gpu = series[i].max_gpu, n = 0;
      for (std::size_t k = i; k < std::min(series.size(), i + step); ++k, ++n) {
        sum += series[k].mean;
        if (series[k].min < lo) {
          lo = series[k].min;
          lo_gpu = series[k].min_gpu;
        }
        if (series[k].max > hi) {
          hi = series[k].max;
          hi_gpu = series[k].max_gpu;
        }
      }
      rows.push_back({fmt::format("{:.1f}", series[i].t_s),
                      format_value(m, sum / static_cast<double>(n)), format_value(m, lo),
                      a.gpus[lo_gpu].key.label(hosts), format_value(m, hi),
                      a.gpus[hi_gpu].key.label(hosts)});
    }
    out += table({"t (s)", "mean", "min", "min GPU", "max", "max GPU"}, rows, style);
  }
  return out;
}

nlohmann::json summary_json(const analyze::Summary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"median", s.median}, {"p5", s.p5},
          {"p95", s.p95},     {"min", s.min},   {"max", s.max}};
}

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string analysis_text(const Analysis& a, View view, const std::vector<Metric>& metrics,
                          bool color) {
  const Style style{color};
  std::string out = header_text(a, style);
  if (view == View::Summary || view == View::All) {
    out += summary_text(a, style) + gpus_text(a, style) + energy_text(a, style) +
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

namespace {

using nlohmann::json;

json runs_json(const Analysis& a) {
  json runs = json::array();
  for (const auto& r : a.runs) {
    runs.push_back({{"source", r.source},
                    {"run_id", r.run_id},
                    {"host", r.host},
                    {"rank", opt(r.rank)},
                    {"launcher", opt(r.launcher)},
                    {"job_id", opt(r.job_id)},
                    {"local_rank", opt(r.local_rank)},
                    {"world_size", opt(r.world_size)},
                    {"node_name", opt(r.node_name)},
                    {"pod_name", opt(r.pod_name)},
                    {"pod_namespace", opt(r.pod_namespace)},
                    {"label", r.label},
                    {"command", r.command_line},
                    {"status", r.status},
                    {"exit_code", opt(r.exit_code)},
                    {"scenario", opt(r.scenario)},
                    {"origin", opt(r.origin)},
                    {"problems", r.problems},
                    {"sampling_interval_s", r.sampling_interval_s}});
  }
  return runs;
}

json processes_json(const Analysis& a) {
  json out = json::array();
  for (const auto& u : a.processes) {
    const auto& p = u.process;
    out.push_back({{"run_id", u.run_id},
                   {"device_index", u.device_index},
                   {"gpu", u.gpu},
                   {"pid", p.pid},
                   {"command", opt(p.command)},
                   {"command_line", opt(p.command_line)},
                   {"user", opt(p.user)},
                   {"uid", opt(p.uid)},
                   {"container_id", opt(p.container_id)},
                   {"container_runtime", opt(p.container_runtime)},
                   {"pod_uid", opt(p.pod_uid)},
                   {"pod_name", opt(p.pod_name)},
                   {"pod_namespace", opt(p.pod_namespace)},
                   {"slurm_job_id", opt(p.slurm_job_id)},
                   {"slurm_step", opt(p.slurm_step)},
                   {"launcher", opt(p.launcher)},
                   {"rank", opt(p.rank)},
                   {"local_rank", opt(p.local_rank)},
                   {"in_job", opt(p.in_job)},
                   {"first_s", u.first_s},
                   {"last_s", u.last_s},
                   {"looks", u.looks},
                   {"peak_memory_bytes", opt(u.peak_memory_bytes)},
                   {"mean_sm_percent", opt(u.mean_sm_percent)}});
  }
  return out;
}

json over_both_json(const Analysis& a) {
  json over_both = json::object();
  for (const auto& m : kMetrics) {
    const auto& o = a.over_both[static_cast<std::size_t>(m.id)];
    if (!analyze::summarised(m.id)) continue;
    over_both[std::string(m.name)] = o ? json{{"unit", m.unit},
                                              {"count", o->count},
                                              {"mean", o->mean},
                                              {"median", o->median},
                                              {"min", o->min},
                                              {"max", o->max},
                                              {"median_exact", o->median_exact}}
                                       : json(nullptr);
  }
  return over_both;
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
         {"vendor", g.key.vendor},
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

json over_space_json(const Analysis& a) {
  json over_space = json::object();
  for (const auto& m : kMetrics) {
    const auto& series = a.over_space[static_cast<std::size_t>(m.id)];
    if (!analyze::summarised(m.id) || series.empty()) continue;
    json t = json::array(), mean = json::array(), lo = json::array(), hi = json::array(),
         lo_gpu = json::array(), hi_gpu = json::array();
    for (const auto& p : series) {
      t.push_back(p.t_s);
      mean.push_back(p.mean);
      lo.push_back(p.min);
      hi.push_back(p.max);
      lo_gpu.push_back(p.min_gpu);
      hi_gpu.push_back(p.max_gpu);
    }
    over_space[std::string(m.name)] = {{"t_s", t},  {"mean", mean},      {"min", lo},
                                       {"max", hi}, {"min_gpu", lo_gpu}, {"max_gpu", hi_gpu}};
  }
  return over_space;
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

}  // namespace

namespace {

nlohmann::json figures_json(const analyze::PhaseFigures& f) {
  using nlohmann::json;
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

nlohmann::json phases_json(const Analysis& a) {
  using nlohmann::json;
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

}  // namespace

nlohmann::json analysis_json(const Analysis& a) {
  using nlohmann::json;
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
  json findings = json::array();
  for (const auto& f : a.findings) findings.push_back({{"kind", f.kind}, {"text", f.text}});
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
      {"over_both", over_both_json(a)},
      {"efficiency_score", a.score ? json{{"mean", a.score->mean},
                                          {"median", a.score->median},
                                          {"min", a.score->min},
                                          {"max", a.score->max}}
                                   : json(nullptr)},
      {"gpus", gpus_json(a)},
      {"over_space", over_space_json(a)},
      {"balance", balance_json(a.balance)},
      {"mig_balance", balance_json(a.mig_balance)},
      {"energy_j",
       {{"counter", opt(a.energy_counter_j)}, {"integrated", opt(a.energy_integrated_j)}}},
      {"work",
       {{"units", opt(a.work_units)},
        {"name", a.work_name},
        {"energy_per_unit_j", opt(a.energy_per_unit_j)}}},
      {"carbon", carbon},
      {"node_energy", node_energy_json(a)},
      {"processes", processes_json(a)},
      {"phases", phases_json(a)},
      {"health", health_json(a)},
      {"findings", findings},
      {"notes", a.notes},
  };
}

std::string analysis_csv(const Analysis& a, View view, const std::vector<Metric>& metrics) {
  std::string out;
  auto num = [](double v) { return fmt::format("{}", v); };
  if (view == View::Node) return node_energy_csv(a);
  if (view == View::Carbon) {
    // One row per grid period with energy (none without a series: the header alone).
    out = "start,end,kind,g_per_kwh,energy_j,grams\n";
    if (!a.carbon) return out;
    for (const auto& p : a.carbon->intervals) {
      out +=
          fmt::format("{},{},{},{},{},{}\n", util::utc_text(p.start_wall_ns, "%Y-%m-%dT%H:%M:%SZ"),
                      util::utc_text(p.end_wall_ns, "%Y-%m-%dT%H:%M:%SZ"), p.kind.text(),
                      num(p.g_per_kwh), num(p.energy_j), num(p.grams));
    }
    return out;
  }
  if (view == View::Phases) {
    // One row per phase instance (the first max_phase_instances), in start order.
    out =
        "name,instance,source,run,start_s,end_s,closed,depth,time_s,exclusive_time_s,energy_j,"
        "exclusive_energy_j,mean_power_w,energy_share,sm_active_pct,tensor_active_pct,"
        "dram_active_pct\n";
    if (!a.phases) return out;
    auto opt_num = [&num](const std::optional<double>& v) { return v ? num(*v) : std::string(); };
    for (const auto& i : a.phases->instances) {
      const auto& f = i.figures;
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", util::csv_field(i.name),
          util::csv_field(i.instance), i.source, i.run, num(i.start_s), num(i.end_s),
          i.closed ? 1 : 0, i.depth, num(f.time_s), num(f.exclusive_time_s), opt_num(f.energy_j),
          opt_num(f.exclusive_energy_j), opt_num(f.mean_power_w), opt_num(f.energy_share),
          opt_num(f.metrics[0]), opt_num(f.metrics[1]), opt_num(f.metrics[2]));
    }
    return out;
  }
  if (view == View::Time) {
    out = "run,host,rank,gpu,uuid,metric,unit,count,mean,median,p5,p95,min,max\n";
    for (const auto& g : a.gpus) {
      for (Metric m : metrics) {
        const auto& s = g.over_time[static_cast<std::size_t>(m)];
        out += fmt::format("{},{},{},{},{},{},{},", g.key.run_id, g.key.host,
                           g.key.rank ? std::to_string(*g.key.rank) : "", g.key.device_index,
                           g.key.uuid, info(m).name, info(m).unit);
        out += s ? fmt::format("{},{},{},{},{},{},{}\n", s->count, num(s->mean), num(s->median),
                               num(s->p5), num(s->p95), num(s->min), num(s->max))
                 : "0,,,,,,\n";
      }
    }
    return out;
  }
  if (view == View::Space) {
    out = "metric,unit,t_s,gpus,mean,min,min_gpu,max,max_gpu\n";
    for (Metric m : metrics) {
      for (const auto& p : a.over_space[static_cast<std::size_t>(m)]) {
        out += fmt::format("{},{},{},{},{},{},{},{},{}\n", info(m).name, info(m).unit, num(p.t_s),
                           p.gpus, num(p.mean), num(p.min), p.min_gpu, num(p.max), p.max_gpu);
      }
    }
    return out;
  }
  out = "metric,unit,count,mean,median,min,max\n";
  for (const auto& m : kMetrics) {
    const auto& o = a.over_both[static_cast<std::size_t>(m.id)];
    if (!o) continue;
    out += fmt::format("{},{},{},{},{},{},{}\n", m.name, m.unit, o->count, num(o->mean),
                       num(o->median), num(o->min), num(o->max));
  }
  return out;
}

}  // namespace gpuscope::report
