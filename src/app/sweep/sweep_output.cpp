// The sweep's results for people and scripts: the table on stdout, and beside the database a
// CSV of the trials, a JSON of everything, the plot (PNG) and a self-contained HTML page (the
// sweep section of `gpuscope report`, report/sweep_section.hpp).
#include <fmt/format.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/sweep/sweep_options.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "report/plots/sweep_plot.hpp"
#include "report/sweep_section.hpp"
#include "util/output_file.hpp"

namespace gpuscope::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// "700 W*" for the baseline, as the table's footnote says.
std::string setting_label(const sweep::SweepRecord& r, double value, bool baseline) {
  const std::string label = report::sweep_setting_label(r, value, baseline);
  return baseline && r.knob == sweep::Knob::PowerLimit ? label + "*" : label;
}

std::string num(const std::optional<double>& v, int decimals = 1) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : "–";
}

std::string with_spread(const sweep::Spread& s, int decimals) {
  if (s.count == 0) return "–";
  if (s.count == 1) return fmt::format("{:.{}f}", s.mean, decimals);
  return fmt::format("{:.{}f} ±{:.{}f}", s.mean, decimals, s.stddev, decimals);
}

std::string signed_pct(double v) {
  if (std::abs(v) < 0.05) return "0.0 %";
  return fmt::format("{:+.1f} %", v);
}

json opt(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

json spread_json(const std::optional<sweep::Spread>& s) {
  if (!s || s->count == 0) return nullptr;
  return {{"count", s->count},
          {"mean", s->mean},
          {"min", s->min},
          {"max", s->max},
          {"stddev", s->stddev}};
}

std::string text_table(const sweep::SweepRecord& r) {
  std::string out;
  out += fmt::format("gpuscope sweep · {} · GPU {} · {} settings × {} repeat{} · {}\n",
                     r.knob == sweep::Knob::PowerLimit ? "power limit" : "locked SM clock",
                     fmt::join(r.gpus, ","), r.plan.size(), r.repeat, r.repeat == 1 ? "" : "s",
                     sweep::status_text(r.status));
  out += fmt::format("{:<12} {:>14} {:>16} {:>8} {:>13} {:>10} {:>7} {:>7} {:>7}\n", "setting",
                     "time s", "energy J", "power W", "throughput/s", "J/unit", "temp °C", "SM MHz",
                     "trials");
  for (const auto& s : r.summaries) {
    if (s.trials == 0) continue;
    std::string trials = fmt::format("{}", s.trials);
    if (s.outliers > 0) trials += fmt::format(" ({}!)", s.outliers);
    out += fmt::format("{:<12} {:>14} {:>16} {:>8} {:>13} {:>10} {:>7} {:>7} {:>7}\n",
                       setting_label(r, s.setting, s.baseline), with_spread(s.time_s, 2),
                       with_spread(s.energy_j, 0),
                       s.avg_power_w ? fmt::format("{:.0f}", s.avg_power_w->mean) : "–",
                       s.throughput ? fmt::format("{:.4g}", s.throughput->mean) : "–",
                       s.energy_per_unit_j ? fmt::format("{:.4g}", s.energy_per_unit_j->mean) : "–",
                       num(s.temperature_mean_c, 0), num(s.sm_clock_mean_mhz, 0), trials);
  }
  out +=
      "* default (baseline); ± standard deviation over the repeats; (N!) outlier repeats, left "
      "out\n";
  if (!r.recommendations.empty()) {
    double baseline = 0;
    for (const auto& p : r.plan) {
      if (p.baseline) baseline = p.value;
    }
    out += fmt::format("\nRecommendations (against {})\n", setting_label(r, baseline, false));
    for (const auto& c : r.recommendations) {
      if (!c.setting) {
        out += fmt::format("  {:<46} none qualifies\n", c.title);
        continue;
      }
      out += fmt::format("  {:<46} {:>10}   energy {:>8}   time {:>8}\n", c.title,
                         setting_label(r, *c.setting, false), signed_pct(-c.energy_saving_pct),
                         signed_pct(c.time_change_pct));
    }
  } else if (r.status != sweep::SweepStatus::Finished) {
    out += fmt::format("\nno recommendations: the sweep {} before every trial ran\n",
                       r.status == sweep::SweepStatus::Failed ? "failed" : "was interrupted");
  }
  return out;
}

std::string csv(const sweep::SweepRecord& r) {
  std::string out =
      "trial,setting,unit,baseline,repeat,status,exit_code,time_s,energy_j,energy_source,"
      "avg_power_w,work_units,throughput,energy_per_unit_j,temperature_mean_c,"
      "temperature_max_c,sm_clock_mean_mhz,outlier\n";
  const auto cell = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.6g}", *v) : std::string();
  };
  for (const auto& t : r.trials) {
    if (t.status == sweep::TrialStatus::Planned) continue;
    out += fmt::format("{},{:g},{},{},{},{},{},{:.6g},{},{},{},{},{},{},{},{},{},{}\n", t.number,
                       t.setting, sweep::knob_unit(r.knob), t.baseline ? 1 : 0, t.repeat,
                       sweep::status_text(t.status),
                       t.exit_code ? std::to_string(*t.exit_code) : "", t.time_s, cell(t.energy_j),
                       t.energy_source, cell(t.avg_power_w), cell(t.work_units), cell(t.throughput),
                       cell(t.energy_per_unit_j), cell(t.temperature_mean_c),
                       cell(t.temperature_max_c), cell(t.sm_clock_mean_mhz), t.outlier ? 1 : 0);
  }
  return out;
}

json to_json(const sweep::SweepRecord& r) {
  json plan = json::array();
  for (const auto& p : r.plan) plan.push_back({{"setting", p.value}, {"baseline", p.baseline}});
  json trials = json::array();
  for (const auto& t : r.trials) {
    trials.push_back(
        {{"trial", t.number},
         {"run_id", t.run_id ? json(*t.run_id) : json(nullptr)},
         {"setting", t.setting},
         {"baseline", t.baseline},
         {"repeat", t.repeat},
         {"status", sweep::status_text(t.status)},
         {"exit_code", t.exit_code ? json(*t.exit_code) : json(nullptr)},
         {"time_s", t.status == sweep::TrialStatus::Planned ? json(nullptr) : json(t.time_s)},
         {"energy_j", opt(t.energy_j)},
         {"energy_source", t.energy_source},
         {"avg_power_w", opt(t.avg_power_w)},
         {"work_units", opt(t.work_units)},
         {"throughput", opt(t.throughput)},
         {"energy_per_unit_j", opt(t.energy_per_unit_j)},
         {"temperature_mean_c", opt(t.temperature_mean_c)},
         {"temperature_max_c", opt(t.temperature_max_c)},
         {"sm_clock_mean_mhz", opt(t.sm_clock_mean_mhz)},
         {"outlier", t.outlier}});
  }
  json settings = json::array();
  for (const auto& s : r.summaries) {
    settings.push_back({{"setting", s.setting},
                        {"baseline", s.baseline},
                        {"trials", s.trials},
                        {"outliers", s.outliers},
                        {"time_s", spread_json(s.time_s)},
                        {"energy_j", spread_json(s.energy_j)},
                        {"avg_power_w", spread_json(s.avg_power_w)},
                        {"throughput", spread_json(s.throughput)},
                        {"energy_per_unit_j", spread_json(s.energy_per_unit_j)},
                        {"temperature_mean_c", opt(s.temperature_mean_c)},
                        {"sm_clock_mean_mhz", opt(s.sm_clock_mean_mhz)}});
  }
  json recommendations = json::array();
  for (const auto& c : r.recommendations) {
    const bool has = c.setting.has_value();
    recommendations.push_back(
        {{"selector", c.selector},
         {"title", c.title},
         {"setting", opt(c.setting)},
         {"energy_j", has ? json(c.energy_j) : json(nullptr)},
         {"time_s", has ? json(c.time_s) : json(nullptr)},
         {"energy_saving_pct", has ? json(c.energy_saving_pct) : json(nullptr)},
         {"time_change_pct", has ? json(c.time_change_pct) : json(nullptr)}});
  }
  json restore = json::array();
  for (const auto& g : r.restore.gpus) {
    restore.push_back({{"index", g.index},
                       {"uuid", g.uuid},
                       {"power_limit_w", g.power_limit_mw / 1000.0},
                       {"clocks_locked", g.clocks_locked}});
  }
  return {{"sweep",
           {{"knob", sweep::knob_name(r.knob)},
            {"unit", sweep::knob_unit(r.knob)},
            {"command", r.command},
            {"gpus", r.gpus},
            {"repeat", r.repeat},
            {"warmup_s", r.warmup_s},
            {"max_slowdown", r.max_slowdown},
            {"eta", r.eta},
            {"p_max_w", r.p_max_w},
            {"work_source", r.work_source},
            {"window_begin", r.window_begin},
            {"window_end", r.window_end},
            {"status", sweep::status_text(r.status)},
            {"restored", r.restored},
            {"notes", r.notes}}},
          {"plan", plan},
          {"settings", settings},
          {"recommendations", recommendations},
          {"trials", trials},
          {"restore", restore}};
}

std::vector<std::uint8_t> png_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Written whole in a private folder beside `path` and renamed over it (util::AtomicFile): the
// name is derived from -o in a folder others may write, so whatever is there (a link planted
// for a sweep run as root above all) is replaced, never opened or followed.
void write_text(const fs::path& path, const std::string& text) {
  if (const auto error = util::write_file_atomically(path, text)) {
    throw Error(fmt::format("cannot write {}", path.string()), error.message(),
                "check the free space and the folder's permissions");
  }
}

}  // namespace

SweepOutputs write_sweep_outputs(const sweep::SweepRecord& record, const fs::path& output,
                                 bool database_written, bool quiet) {
  SweepOutputs out;
  if (database_written) out.written.push_back(output);
  // Each output on its own: one that fails (a full disk, a plot library error, bytes that are not
  // UTF-8 in a job argument) must not cost the others the results of a sweep that took hours.
  const auto attempt = [&out](const std::string& what, const auto& write) {
    try {
      write();
    } catch (const std::exception& e) {
      out.failures.push_back(fmt::format("{} was not written: {}", what, e.what()));
    }
  };
  attempt("the table", [&] {
    fmt::print("{}", text_table(record));
    std::fflush(stdout);
  });
  fs::path stem = output;
  stem.replace_extension();
  const fs::path csv_path = stem.string() + ".csv";
  const fs::path json_path = stem.string() + ".json";
  const fs::path png_path = stem.string() + ".png";
  const fs::path html_path = stem.string() + ".html";
  std::vector<fs::path>& written = out.written;
  attempt(csv_path.string(), [&] {
    write_text(csv_path, csv(record));
    written.push_back(csv_path);
  });
  attempt(json_path.string(), [&] {
    write_text(json_path, json_text(to_json(record), 2) + "\n");
    written.push_back(json_path);
  });
  std::optional<fs::path> png;
  try {
    report::plots::write_sweep_plot(record, png_path);
    png = png_path;
    written.push_back(png_path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpuscope: the plot was not drawn: {}\n", e.what());
  }
  attempt(html_path.string(), [&] {
    write_text(html_path, report::sweep_page_html(
                              record, png ? png_bytes(*png) : std::vector<std::uint8_t>{}));
    written.push_back(html_path);
  });
  if (!quiet && !written.empty()) {
    std::string names;
    for (const auto& p : written) names += (names.empty() ? "" : ", ") + p.string();
    fmt::print(stderr, "gpuscope: wrote {}\n", names);
  }
  return out;
}

}  // namespace gpuscope::app
