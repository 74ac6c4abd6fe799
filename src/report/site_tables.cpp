#include "report/site_tables.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "util/local_time.hpp"
#include "util/text_table.hpp"
#include "util/utc_time.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::report {

namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string iso(std::int64_t ms) {
  return util::utc_text(ms * 1'000'000, "%Y-%m-%dT%H:%M:%SZ");
}

std::string local(std::int64_t ms) {
  return util::local_text(ms, "%Y-%m-%d %H:%M");
}

std::string flags_text(const SiteJob& job) {
  std::vector<std::string_view> words;
  for (const JobFlag f : job.flags) words.push_back(flag_word(f));
  return fmt::format("{}", fmt::join(words, ","));
}

std::string num(const std::optional<double>& v, const char* format = "{:.1f}") {
  return v && std::isfinite(*v) ? fmt::format(fmt::runtime(format), *v) : "-";
}

std::string elapsed(double seconds) {
  const auto s = static_cast<long long>(seconds);
  if (s >= 86'400)
    return fmt::format("{}-{:02}:{:02}:{:02}", s / 86'400, s / 3600 % 24, s / 60 % 60, s % 60);
  return fmt::format("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

std::string energy(const std::optional<double>& joules) {
  if (!joules) return "-";
  if (*joules >= 3.6e6) return fmt::format("{:.2f} kWh", *joules / 3.6e6);
  return fmt::format("{:.1f} kJ", *joules / 1e3);
}

std::string memory(const std::optional<double>& bytes) {
  return bytes ? fmt::format("{:.1f} GiB", *bytes / (1024.0 * 1024 * 1024)) : "-";
}

std::string grams(double g) {
  return g >= 1000 ? fmt::format("{:.2f} kg", g / 1000) : fmt::format("{:.0f} g", g);
}

nlohmann::json gpu_json(const SiteJobGpu& g) {
  nlohmann::json j;
  j["key"] = g.key;
  j["node"] = g.node;
  j["index"] = g.index ? nlohmann::json(*g.index) : nlohmann::json(nullptr);
  j["model"] = g.model;
  j["mig_profile"] = g.mig_profile ? nlohmann::json(*g.mig_profile) : nlohmann::json(nullptr);
  j["samples"] = g.samples;
  j["util_pct"] = opt(g.util_pct);
  j["sm_active_pct"] = opt(g.sm_active_pct);
  j["idle_share"] = opt(g.idle_share);
  j["peak_memory_bytes"] = opt(g.peak_memory_bytes);
  j["memory_total_bytes"] = opt(g.memory_total_bytes);
  j["energy_j"] = opt(g.energy_j);
  j["energy_source"] =
      g.energy_source
          ? nlohmann::json(*g.energy_source == EnergySource::Counter ? "counter" : "integrated")
          : nlohmann::json(nullptr);
  j["mean_power_w"] = opt(g.mean_power_w);
  j["score"] = opt(g.score);
  j["health_faults"] = g.health_faults;
  return j;
}

}  // namespace

std::string dump_json(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json site_job_json(const SiteJob& job) {
  nlohmann::json j;
  j["id"] = job.id;
  j["shown_id"] = job.shown_id;
  j["name"] = job.name;
  j["user"] = job.user;
  j["account"] = job.account;
  j["partition"] = job.partition;
  j["state"] = job.state;
  j["exit_code"] = job.exit_code ? nlohmann::json(*job.exit_code) : nlohmann::json(nullptr);
  j["start"] = iso(job.start_ms);
  j["end"] = iso(job.end_ms);
  j["running"] = job.running;
  j["elapsed_s"] = job.elapsed_s();
  j["nodes"] = job.nodes;
  j["gpus"] = job.gpus;
  j["gpu_model"] = job.gpu_model;
  j["gpu_hours"] = job.gpu_hours;
  j["idle_gpu_hours"] = opt(job.idle_gpu_hours);
  j["util_pct"] = opt(job.util_pct);
  j["sm_active_pct"] = opt(job.sm_active_pct);
  j["peak_memory_bytes"] = opt(job.peak_memory_bytes);
  j["energy_j"] = opt(job.energy_j);
  j["node_energy_j"] = opt(job.node_energy_j);
  j["co2_g"] = opt(job.co2_g);
  j["score"] = opt(job.score);
  j["flags"] = nlohmann::json::array();
  for (const JobFlag f : job.flags) j["flags"].push_back(std::string(flag_word(f)));
  j["source"] = std::string(source_word(job.source));
  j["notes"] = job.notes;
  if (!job.gpu_rows.empty()) {
    j["gpu_rows"] = nlohmann::json::array();
    for (const auto& g : job.gpu_rows) j["gpu_rows"].push_back(gpu_json(g));
  }
  return j;
}

nlohmann::json usage_row_json(const UsageRow& r) {
  return {{"group", r.group},
          {"jobs", r.jobs},
          {"gpu_hours", r.gpu_hours},
          {"idle_gpu_hours", r.idle_gpu_hours},
          {"energy_j", r.energy_j},
          {"co2_g", r.co2_g},
          {"util_pct", opt(r.util_pct)},
          {"sm_active_pct", opt(r.sm_active_pct)},
          {"score", opt(r.score)},
          {"jobs_without_figures", r.jobs_without_figures},
          {"flagged_jobs", r.flagged_jobs}};
}

std::string jobs_text(std::span<const SiteJob> jobs, const UsageRow& total,
                      const SiteTableContext& c) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& j : jobs) {
    rows.push_back({util::visible(j.shown_id), util::visible(j.user), util::visible(j.account),
                    util::visible(j.partition), util::visible(j.state), fmt::format("{}", j.gpus),
                    util::visible(j.gpu_model), elapsed(j.elapsed_s()),
                    fmt::format("{:.2f}", j.gpu_hours), num(j.idle_gpu_hours, "{:.2f}"),
                    num(j.util_pct), num(j.sm_active_pct), memory(j.peak_memory_bytes),
                    energy(j.energy_j), j.co2_g ? grams(*j.co2_g) : "-", num(j.score, "{:.2f}"),
                    j.source == JobSource::None ? "no data" : flags_text(j)});
  }
  rows.push_back({"total", fmt::format("{} jobs", total.jobs), "", "", "", "", "", "",
                  fmt::format("{:.2f}", total.gpu_hours),
                  fmt::format("{:.2f}", total.idle_gpu_hours), num(total.util_pct),
                  num(total.sm_active_pct), "", energy(total.energy_j), grams(total.co2_g),
                  num(total.score, "{:.2f}"), fmt::format("{} flagged", total.flagged_jobs)});
  util::TableLayout layout;
  layout.align = {util::Align::Left, util::Align::Left,  util::Align::Left, util::Align::Left,
                  util::Align::Left, util::Align::Right, util::Align::Left};
  layout.align.resize(16, util::Align::Right);
  layout.align.push_back(util::Align::Left);
  const auto table = render_table(
      {"JOB", "USER", "ACCOUNT", "PARTITION", "STATE", "GPUS", "MODEL", "ELAPSED", "GPU-H",
       "IDLE-H", "UTIL%", "SM%", "PEAK MEM", "ENERGY", "CO2", "SCORE", "FLAGS"},
      rows, layout);
  std::string out =
      fmt::format("GPU jobs that ended {} to {} ({}), the most idle GPU-hours first\n",
                  local(c.from_ms), local(c.to_ms), util::visible(c.source));
  out += table.header + table.body;
  if (c.matched > static_cast<std::int64_t>(jobs.size())) {
    out += fmt::format("({} more jobs not shown: --limit 0 shows all; the total counts them)\n",
                       c.matched - static_cast<std::int64_t>(jobs.size()));
  }
  if (total.jobs_without_figures > 0) {
    out += fmt::format(
        "{} jobs have no figures: the server no longer had them and no summary "
        "was kept (docs/fleet.md)\n",
        total.jobs_without_figures);
  }
  return out;
}

nlohmann::json jobs_json(std::span<const SiteJob> jobs, const UsageRow& total,
                         const SiteTableContext& c) {
  nlohmann::json j;
  j["from"] = iso(c.from_ms);
  j["to"] = iso(c.to_ms);
  j["source"] = c.source;
  j["matched"] = c.matched;
  j["jobs"] = nlohmann::json::array();
  for (const auto& job : jobs) j["jobs"].push_back(site_job_json(job));
  j["total"] = usage_row_json(total);
  return j;
}

std::string jobs_csv(std::span<const SiteJob> jobs) {
  std::string out =
      "job_id,shown_id,name,user,account,partition,state,exit_code,start,end,elapsed_s,nodes,"
      "gpus,gpu_model,gpu_hours,idle_gpu_hours,util_pct,sm_active_pct,peak_memory_bytes,"
      "energy_j,node_energy_j,co2_g,score,flags,source\n";
  auto v = [](const std::optional<double>& x) { return x ? fmt::format("{}", *x) : std::string(); };
  for (const auto& j : jobs) {
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        util::csv_field(j.id), util::csv_field(j.shown_id), util::csv_field(j.name),
        util::csv_field(j.user), util::csv_field(j.account), util::csv_field(j.partition),
        util::csv_field(j.state), j.exit_code ? std::to_string(*j.exit_code) : "", iso(j.start_ms),
        iso(j.end_ms), j.elapsed_s(), util::csv_field(fmt::format("{}", fmt::join(j.nodes, " "))),
        j.gpus, util::csv_field(j.gpu_model), j.gpu_hours, v(j.idle_gpu_hours), v(j.util_pct),
        v(j.sm_active_pct), v(j.peak_memory_bytes), v(j.energy_j), v(j.node_energy_j), v(j.co2_g),
        v(j.score), flags_text(j), source_word(j.source));
  }
  return out;
}

std::string usage_text(std::span<const UsageRow> rows, const UsageRow& total,
                       const SiteTableContext& c) {
  std::vector<std::vector<std::string>> body;
  auto line = [&](const UsageRow& r) {
    body.push_back({util::visible(r.group), fmt::format("{}", r.jobs),
                    fmt::format("{:.2f}", r.gpu_hours), fmt::format("{:.2f}", r.idle_gpu_hours),
                    energy(r.energy_j), grams(r.co2_g), num(r.util_pct), num(r.sm_active_pct),
                    num(r.score, "{:.2f}"), fmt::format("{}", r.flagged_jobs),
                    fmt::format("{}", r.jobs_without_figures)});
  };
  for (const auto& r : rows) line(r);
  line(total);
  util::TableLayout layout;
  layout.align = {util::Align::Left};
  std::string by = c.by;
  for (auto& ch : by) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  const auto table = render_table({by, "JOBS", "GPU-H", "IDLE-H", "ENERGY", "CO2", "UTIL%", "SM%",
                                   "SCORE", "FLAGGED", "NO DATA"},
                                  body, layout);
  return fmt::format("GPU usage per {} of the jobs that ended {} to {} ({})\n", c.by,
                     local(c.from_ms), local(c.to_ms), util::visible(c.source)) +
         table.header + table.body;
}

nlohmann::json usage_json(std::span<const UsageRow> rows, const UsageRow& total,
                          const SiteTableContext& c) {
  nlohmann::json j;
  j["from"] = iso(c.from_ms);
  j["to"] = iso(c.to_ms);
  j["source"] = c.source;
  j["by"] = c.by;
  j["groups"] = nlohmann::json::array();
  for (const auto& r : rows) j["groups"].push_back(usage_row_json(r));
  j["total"] = usage_row_json(total);
  return j;
}

std::string usage_csv(std::span<const UsageRow> rows, const std::string& by) {
  std::string out = by +
                    ",jobs,gpu_hours,idle_gpu_hours,energy_j,co2_g,util_pct,sm_active_pct,score,"
                    "flagged_jobs,jobs_without_figures\n";
  auto v = [](const std::optional<double>& x) { return x ? fmt::format("{}", *x) : std::string(); };
  for (const auto& r : rows) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", util::csv_field(r.group), r.jobs,
                       r.gpu_hours, r.idle_gpu_hours, r.energy_j, r.co2_g, v(r.util_pct),
                       v(r.sm_active_pct), v(r.score), r.flagged_jobs, r.jobs_without_figures);
  }
  return out;
}

}  // namespace gpuscope::report
