#include "report/runs_view.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope::report {

using analyze::Analysis;
using nlohmann::json;

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

}  // namespace

std::string runs_text(const Analysis& a, const Style& style) {
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

}  // namespace gpuscope::report
