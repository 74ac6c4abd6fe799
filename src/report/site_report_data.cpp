// The site report's data: SiteReportData as the JSON object the page reads, and the heatmap's
// cells as bytes. The shape of both is in docs/report.md, "The site report".
#include "report/site_report_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "report/html_data.hpp"

namespace gpuscope::report {
namespace {

using nlohmann::json;

// A heatmap cell's utilization byte: 0..250 is 0..100 % (0.4 % steps); this one is a blank
// cell, where no job held a GPU of the node (busy share 0 or unknown).
constexpr std::uint8_t kBlankCell = 255;
constexpr double kUtilSteps = 250;
constexpr double kBusySteps = 250;

json optional_number(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? json(*value) : json(nullptr);
}

json usage_row_json(const UsageRow& row) {
  return {{"group", row.group},
          {"jobs", row.jobs},
          {"gpu_hours", row.gpu_hours},
          {"idle_gpu_hours", row.idle_gpu_hours},
          {"energy_j", row.energy_j},
          {"co2_g", row.co2_g},
          {"util_pct", optional_number(row.util_pct)},
          {"sm_active_pct", optional_number(row.sm_active_pct)},
          {"score", optional_number(row.score)},
          {"jobs_without_figures", row.jobs_without_figures},
          {"flagged_jobs", row.flagged_jobs}};
}

json usage_rows_json(const std::vector<UsageRow>& rows) {
  json out = json::array();
  for (const UsageRow& row : rows) out.push_back(usage_row_json(row));
  return out;
}

json series_json(const std::vector<GroupSeries>& groups, std::size_t periods) {
  json out = json::array();
  for (const GroupSeries& g : groups) {
    if (g.gpu_hours.size() != periods || g.idle_gpu_hours.size() != periods) {
      throw Error(fmt::format("cannot write the site report: the series of \"{}\" has {} values "
                              "for {} periods",
                              g.group, g.gpu_hours.size(), periods),
                  "each group's series needs one value per period",
                  "report this as a bug of gpuscope");
    }
    out.push_back(
        {{"group", g.group}, {"gpu_hours", g.gpu_hours}, {"idle_gpu_hours", g.idle_gpu_hours}});
  }
  return out;
}

std::string job_command(std::string_view pattern, std::string_view id) {
  std::string out;
  for (std::size_t at = 0; at < pattern.size();) {
    if (pattern.substr(at, 4) == "{id}") {
      out += id;
      at += 4;
    } else {
      out += pattern[at++];
    }
  }
  return out;
}

json job_json(const SiteJob& job, std::string_view pattern) {
  json flags = json::array();
  for (const JobFlag f : job.flags) flags.push_back(std::string(flag_word(f)));
  return {{"id", job.id},
          {"shown_id", job.shown_id.empty() ? job.id : job.shown_id},
          {"name", job.name},
          {"user", job.user},
          {"account", job.account},
          {"partition", job.partition},
          {"state", job.state},
          {"exit_code", job.exit_code ? json(*job.exit_code) : json(nullptr)},
          {"start_ms", job.start_ms},
          {"end_ms", job.end_ms},
          {"running", job.running},
          {"nodes", job.nodes},
          {"gpus", job.gpus},
          {"gpu_model", job.gpu_model},
          {"gpu_hours", job.gpu_hours},
          {"idle_gpu_hours", optional_number(job.idle_gpu_hours)},
          {"util_pct", optional_number(job.util_pct)},
          {"sm_active_pct", optional_number(job.sm_active_pct)},
          {"peak_memory_bytes", optional_number(job.peak_memory_bytes)},
          {"energy_j", optional_number(job.energy_j)},
          {"co2_g", optional_number(job.co2_g)},
          {"score", optional_number(job.score)},
          {"flags", flags},
          {"source", std::string(source_word(job.source))},
          {"notes", job.notes},
          {"command", job_command(pattern, job.id)}};
}

json efficiency_json(const EfficiencyBands& bands) {
  return {
      {"gpu_hours", bands.gpu_hours}, {"jobs", bands.jobs}, {"jobs_unknown", bands.jobs_unknown}};
}

void check_heatmap(const NodeHeatmap& h) {
  const std::size_t cells = h.nodes.size() * h.bins;
  if (h.util_pct.size() != cells || h.busy.size() != cells) {
    throw Error(fmt::format("cannot write the site report's heatmap: {} nodes × {} bins are {} "
                            "cells, but it has {} utilizations and {} busy shares",
                            h.nodes.size(), h.bins, cells, h.util_pct.size(), h.busy.size()),
                "the heatmap's arrays must be nodes × bins, row by node",
                "report this as a bug of gpuscope");
  }
  if (cells > 0 && h.bin_ms <= 0) {
    throw Error("cannot write the site report's heatmap: its bins have no length",
                fmt::format("bin_ms is {}", h.bin_ms), "report this as a bug of gpuscope");
  }
}

}  // namespace

std::vector<std::uint8_t> site_heatmap_bytes(const NodeHeatmap& heatmap) {
  check_heatmap(heatmap);
  const std::size_t cells = heatmap.util_pct.size();
  std::vector<std::uint8_t> out(2 * cells, 0);
  for (std::size_t i = 0; i < cells; ++i) {
    const double util = heatmap.util_pct[i];
    const double busy = heatmap.busy[i];
    if (!std::isfinite(util) || !std::isfinite(busy) || busy <= 0) {
      out[i] = kBlankCell;
      continue;
    }
    out[i] =
        static_cast<std::uint8_t>(std::lround(std::clamp(util, 0.0, 100.0) / 100 * kUtilSteps));
    const long busy_byte = std::lround(std::min(busy, 1.0) * kBusySteps);
    out[cells + i] = static_cast<std::uint8_t>(std::max(1L, busy_byte));
  }
  return out;
}

json site_report_json(const SiteReportData& data) {
  const NodeHeatmap& h = data.heatmap;
  json out = {
      {"title", data.title.empty() ? std::string("GPU jobs of the site") : data.title},
      {"generator", data.generator},
      {"from_ms", data.from_ms},
      {"to_ms", data.to_ms},
      {"source", data.source},
      {"totals", usage_row_json(data.totals)},
      {"periods", data.periods},
      {"by_user", series_json(data.by_user, data.periods.size())},
      {"by_account", series_json(data.by_account, data.periods.size())},
      {"users", usage_rows_json(data.users)},
      {"accounts", usage_rows_json(data.accounts)},
      {"efficiency", efficiency_json(data.efficiency)},
      {"job_command", data.job_command},
      {"heatmap",
       {{"nodes", h.nodes}, {"start_ms", h.start_ms}, {"bin_ms", h.bin_ms}, {"bins", h.bins}}}};
  json jobs = json::array();
  for (const SiteJob& job : data.top_idle) jobs.push_back(job_json(job, data.job_command));
  out["top_idle"] = std::move(jobs);
  // Six digits: a year's totals (millions of GPU-hours) still read exactly enough.
  round_numbers(out, 6);
  return out;
}

}  // namespace gpuscope::report
