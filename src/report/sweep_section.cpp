#include "report/sweep_section.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "report/html_data.hpp"
#include "report/html_report.hpp"
#include "util/command_line.hpp"

namespace gpuscope::report {
namespace {

std::string num(const std::optional<double>& v, int decimals) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : "–";
}

std::string sig(const std::optional<double>& v) {
  return v ? fmt::format("{:.4g}", *v) : "–";
}

std::string signed_pct(double v) {
  if (std::abs(v) < 0.05) return "0.0 %";
  return fmt::format("{:+.1f} %", v);
}

// "0.537 ±0.002 (0.535–0.539)": the mean, the standard deviation and the range over the repeats
// that count; the mean alone for one.
std::string spread(const sweep::Spread& s, int decimals) {
  if (s.count == 0) return "–";
  if (s.count == 1) return fmt::format("{:.{}f}", s.mean, decimals);
  return fmt::format("{:.{}f} ±{:.{}f} ({:.{}f}–{:.{}f})", s.mean, decimals, s.stddev, decimals,
                     s.min, decimals, s.max, decimals);
}

std::string spread(const std::optional<sweep::Spread>& s, int decimals) {
  return s ? spread(*s, decimals) : "–";
}

double baseline_setting(const sweep::SweepRecord& r) {
  for (const auto& p : r.plan) {
    if (p.baseline) return p.value;
  }
  return 0;
}

// What the savings are measured against: "the default 700 W", "unlocked clocks".
std::string against(const sweep::SweepRecord& r) {
  if (r.knob == sweep::Knob::SmClock) return "unlocked clocks";
  return "the default " + sweep_setting_label(r, baseline_setting(r), true);
}

std::string about(const sweep::SweepRecord& r) {
  std::string gpus;
  for (unsigned g : r.gpus) gpus += fmt::format("{}{}", gpus.empty() ? "" : ", ", g);
  std::string out = fmt::format(
      "<p class=\"sweep-about\"><code>{}</code> on GPU{} {} · {} setting{} × {} repeat{} · {}",
      html_escape(fmt::format("{}", util::shell_command_line(r.command))),
      r.gpus.size() == 1 ? "" : "s", gpus, r.plan.size(), r.plan.size() == 1 ? "" : "s", r.repeat,
      r.repeat == 1 ? "" : "s", html_escape(std::string(sweep::status_text(r.status))));
  out += r.restored ? " · GPUs restored" : " · <strong>GPUs not restored</strong>";
  out += "</p>\n<p class=\"muted\">";
  if (!r.window_begin.empty() || !r.window_end.empty()) {
    out += fmt::format(
        "Each trial is measured from {} to {}. ",
        r.window_begin.empty()
            ? "the job's start"
            : "the job's line matching <code>" + html_escape(r.window_begin) + "</code>",
        r.window_end.empty() ? "its end"
                             : "its line matching <code>" + html_escape(r.window_end) + "</code>");
  } else if (r.warmup_s > 0) {
    out += fmt::format("Each trial is measured from {:g} s after the job's start to its end. ",
                       r.warmup_s);
  } else {
    out += "Each trial is measured from the job's start to its end. ";
  }
  if (!r.work_source.empty()) out += "Work per trial from " + html_escape(r.work_source) + ". ";
  out += fmt::format(
      "Savings are against {}; the bounded choice allows {:g} % slowdown; Zeus's cost uses "
      "η = {:g} and P<sub>max</sub> = {:g} W.</p>\n",
      html_escape(against(r)), r.max_slowdown * 100, r.eta, r.p_max_w);
  for (const auto& note : r.notes) out += "<p class=\"note\">" + html_escape(note) + "</p>\n";
  return out;
}

std::string recommendations(const sweep::SweepRecord& r) {
  if (r.recommendations.empty()) {
    return fmt::format(
        "<p class=\"note sweep-no-recommendations\">No recommendations: the sweep {} "
        "before every trial ran.</p>\n",
        r.status == sweep::SweepStatus::Failed ? "failed" : "was interrupted");
  }
  std::string out = fmt::format(
      "<h3>Recommendations (against {})</h3>\n<table class=\"sweep-recommendations\"><thead><tr>"
      "<th>selector</th><th>setting</th><th>energy J</th><th>time s</th><th>energy</th>"
      "<th>time</th></tr></thead><tbody>\n",
      html_escape(against(r)));
  for (const auto& c : r.recommendations) {
    if (!c.setting) {
      out += fmt::format(
          "<tr data-selector=\"{}\"><td>{}</td><td colspan=\"5\" class=\"text\">none "
          "qualifies</td></tr>\n",
          html_escape(c.selector), html_escape(c.title));
      continue;
    }
    out += fmt::format(
        "<tr data-selector=\"{}\" data-setting=\"{:g}\"><td>{}</td><td>{}</td><td>{:.1f}</td>"
        "<td>{:.3f}</td><td>{}</td><td>{}</td></tr>\n",
        html_escape(c.selector), *c.setting, html_escape(c.title),
        html_escape(sweep_setting_label(r, *c.setting, false)), c.energy_j, c.time_s,
        signed_pct(-c.energy_saving_pct), signed_pct(c.time_change_pct));
  }
  out += "</tbody></table>\n";
  return out;
}

std::string settings(const sweep::SweepRecord& r) {
  std::string out =
      "<h3>Per setting</h3>\n<table class=\"sweep-settings\"><thead><tr><th>setting</th>"
      "<th>time s</th><th>energy J</th><th>power W</th><th>throughput/s</th><th>J/unit</th>"
      "<th>temp °C</th><th>SM MHz</th><th>trials</th></tr></thead><tbody>\n";
  for (const auto& s : r.summaries) {
    if (s.trials == 0) continue;
    std::string trials = fmt::format("{}", s.trials);
    if (s.outliers > 0)
      trials += fmt::format(" ({} outlier{})", s.outliers, s.outliers == 1 ? "" : "s");
    out += fmt::format(
        "<tr data-setting=\"{:g}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        s.setting, html_escape(sweep_setting_label(r, s.setting, s.baseline, true)),
        spread(s.time_s, 3), spread(s.energy_j, 1),
        s.avg_power_w ? fmt::format("{:.0f}", s.avg_power_w->mean) : "–", spread(s.throughput, 1),
        s.energy_per_unit_j ? sig(s.energy_per_unit_j->mean) : "–", num(s.temperature_mean_c, 0),
        num(s.sm_clock_mean_mhz, 0), trials);
  }
  out +=
      "</tbody></table>\n<p class=\"muted\">mean ±standard deviation (min–max) over the repeats "
      "that count; outlier repeats are left out.</p>\n";
  return out;
}

std::string trials(const sweep::SweepRecord& r) {
  std::string out =
      "<h3>Trials</h3>\n<table class=\"sweep-trials\"><thead><tr><th>trial</th><th>setting</th>"
      "<th>repeat</th><th>status</th><th>time s</th><th>energy J</th><th>power W</th>"
      "<th>work</th><th>throughput/s</th><th>J/unit</th><th>outlier</th></tr></thead><tbody>\n";
  for (const auto& t : r.trials) {
    if (t.status == sweep::TrialStatus::Planned) continue;
    out += fmt::format(
        "<tr data-trial=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        t.number, t.number, html_escape(sweep_setting_label(r, t.setting, t.baseline, true)),
        t.repeat, html_escape(std::string(sweep::status_text(t.status))), t.time_s,
        num(t.energy_j, 1), num(t.avg_power_w, 1), sig(t.work_units), num(t.throughput, 2),
        sig(t.energy_per_unit_j), t.outlier ? "yes" : "");
  }
  out += "</tbody></table>\n";
  return out;
}

}  // namespace

std::string sweep_setting_label(const sweep::SweepRecord& record, double value, bool baseline,
                                bool mark_baseline) {
  if (record.knob == sweep::Knob::SmClock && baseline) return "unlocked";
  return fmt::format("{:g} {}{}", value, sweep::knob_unit(record.knob),
                     baseline && mark_baseline ? " (default)" : "");
}

std::string sweep_section_html(const sweep::SweepRecord& record, std::span<const std::uint8_t> png,
                               const std::string& id) {
  const bool clocks = record.knob == sweep::Knob::SmClock;
  std::string out =
      fmt::format("<section id=\"{}\" class=\"sweep\">\n<h2>{}</h2>\n", html_escape(id),
                  clocks ? "Locked-clock sweep" : "Power-limit sweep");
  out += about(record);
  out += recommendations(record);
  out += settings(record);
  out += fmt::format("<h3>Energy, time, throughput and energy per unit against the {}</h3>\n",
                     clocks ? "locked SM clock" : "power limit");
  if (png.empty()) {
    out += "<p class=\"note\">The plot could not be drawn.</p>\n";
  } else {
    out += "<img class=\"sweep-plot\" alt=\"sweep plot\" src=\"data:image/png;base64," +
           base64(png) + "\">\n";
  }
  out += trials(record);
  out += "</section>\n";
  return out;
}

std::string sweep_page_html(const sweep::SweepRecord& record, std::span<const std::uint8_t> png) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>gpuscope sweep</title>\n<style>body{font-family:system-ui,sans-serif;margin:2em;"
      "color:#222}img{max-width:100%}code{background:#f6f6f6}.muted,.note{color:#5f6b7a}"
      "table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
      "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right;white-space:nowrap}"
      "td:first-child,th:first-child{text-align:left}th{background:#f0f0f0}</style></head>"
      "<body>\n";
  out += fmt::format("<h1>gpuscope sweep: {}</h1>\n",
                     html_escape(fmt::format("{}", util::shell_command_line(record.command))));
  out += sweep_section_html(record, png, "sweep");
  out += "</body></html>\n";
  return out;
}

}  // namespace gpuscope::report
