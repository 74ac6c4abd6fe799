#include "app/job/job_window.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.hpp"
#include "ingest/monitoring/slurm_accounting.hpp"
#include "launch/capture.hpp"
#include "tsdb/promql.hpp"
#include "util/environment.hpp"
#include "util/number_text.hpp"
#include "util/utc_time.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::app {

namespace {

using namespace std::chrono_literals;

const char* const kSacctHint =
    "gpuscope job reads SLURM's accounting with sacct: run it where sacct works (a login "
    "node), set GPUSCOPE_SACCT to its path, or give --hosts, --from and --to instead";

// The only value of `series` (instant answers), or nullopt.
std::optional<double> only_value(const std::vector<tsdb::Series>& series) {
  double best = -INFINITY;
  for (const auto& s : series) {
    for (const auto& p : s.points) best = std::max(best, p.value);
  }
  return std::isfinite(best) ? std::optional<double>(best) : std::nullopt;
}

}  // namespace

std::string run_sacct(const std::string& sacct, const std::vector<std::string>& arguments,
                      std::chrono::seconds limit, const char* hint) {
  if (hint == nullptr) hint = kSacctHint;
  const launch::Captured c = launch::capture(sacct, arguments, limit, hint);
  if (c.timed_out) {
    throw Error(fmt::format("sacct did not answer within {} s", limit.count()),
                "slurmdbd may be down or overloaded", hint);
  }
  if (c.exit_code != 0) {
    std::string said = c.err.empty() ? c.out : c.err;
    if (said.size() > 400) said.resize(400);
    throw Error(fmt::format("sacct failed (exit {})", c.exit_code), util::visible(said), hint);
  }
  return c.out;
}

std::string sacct_program(const std::string& fallback) {
  const std::string sacct = util::environment_or_empty("GPUSCOPE_SACCT");
  return sacct.empty() ? fallback : sacct;
}

ingest::JobWindow slurm_job_window(const std::string& sacct, const std::string& job_id,
                                   std::int64_t now_ms) {
  const bool id_ok = !job_id.empty() && std::all_of(job_id.begin(), job_id.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '+';
  });
  if (!id_ok) {
    throw Error::usage(fmt::format("'{}' is not a SLURM job id", job_id), {},
                       "give the number sbatch printed (array tasks as 123_4)");
  }
  ingest::JobWindow job =
      ingest::read_sacct_job(run_sacct(sacct, ingest::sacct_job_arguments(job_id)), job_id, now_ms);
  const auto others = ingest::read_sacct_overlaps(
      run_sacct(sacct, ingest::sacct_overlap_arguments(job.nodes, job.window)), job_id);
  job.exclusive = others.empty();
  return job;
}

std::int64_t time_option_ms(const std::string& option, const std::string& text,
                            std::int64_t now_ms) {
  if (text == "now") return now_ms;
  const auto ns = util::parse_utc_time(text);
  if (!ns) {
    throw Error::usage(fmt::format("{} '{}' is not a time", option, text), {},
                       "give Unix seconds, ISO 8601 with a zone (2026-11-25T13:30Z or "
                       "2026-11-25T14:30+01:00) or now");
  }
  return *ns / 1'000'000;
}

ingest::JobWindow hosts_window(const std::vector<std::string>& hosts,
                               const std::optional<std::string>& from,
                               const std::optional<std::string>& to, std::int64_t now_ms) {
  if (!from) {
    throw Error::usage("--hosts needs --from", {}, "say when the work began: --from TIME");
  }
  ingest::JobWindow job;
  job.kind = "hosts";
  job.nodes = hosts;
  job.window.start_ms = time_option_ms("--from", *from, now_ms);
  job.window.end_ms = to ? time_option_ms("--to", *to, now_ms) : now_ms;
  job.running = !to || *to == "now";
  job.exclusive = true;  // the user named the hosts: every GPU on them is meant
  if (job.window.end_ms <= job.window.start_ms) {
    throw Error::usage(fmt::format("--to is not after --from"), {},
                       "give a window that ends after it begins");
  }
  return job;
}

ingest::JobWindow pod_window(tsdb::Source& source, const std::string& namespace_and_name,
                             std::int64_t now_ms, std::int64_t lookback_ms) {
  const auto slash = namespace_and_name.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == namespace_and_name.size()) {
    throw Error::usage(fmt::format("--pod '{}' is not NAMESPACE/NAME", namespace_and_name));
  }
  ingest::JobWindow job;
  job.kind = "pod";
  job.pod_namespace = namespace_and_name.substr(0, slash);
  job.pod_name = namespace_and_name.substr(slash + 1);
  job.id = namespace_and_name;
  std::vector<std::pair<std::string, std::string>> pod{{"namespace", *job.pod_namespace},
                                                       {"pod", *job.pod_name}};
  const std::string range = "[" + tsdb::duration(lookback_ms) + "]";
  auto last = [&](const char* name) {
    return source.instant("last_over_time(" + tsdb::selector(name, pod) + range + ")", now_ms);
  };
  // A pod's name comes back with each new pod of a StatefulSet or a Job's retry: kube-state-
  // metrics tells them apart by uid. The latest start is the pod meant; its completion time and
  // node are those of its uid (another pod of the name may have completed since, or run on
  // another node the same day).
  const auto starts = last("kube_pod_start_time");
  const auto start_s = only_value(starts);
  if (!start_s) {
    throw Error(fmt::format("no pod {} in the monitoring database", namespace_and_name),
                fmt::format("no kube_pod_start_time series names it over the last {} days",
                            lookback_ms / 86'400'000),
                "check the name (kubectl get pod -n NAMESPACE), that kube-state-metrics is "
                "scraped into this server, or give --lookback-days");
  }
  for (const auto& s : starts) {
    const auto uid = s.labels.find("uid");
    if (uid == s.labels.end() || uid->second.empty()) continue;
    if (std::any_of(s.points.begin(), s.points.end(),
                    [&](const tsdb::Point& p) { return p.value == *start_s; })) {
      pod.emplace_back("uid", uid->second);
      break;
    }
  }
  job.window.start_ms = std::llround(*start_s * 1000);
  auto end_s = only_value(last("kube_pod_completion_time"));
  if (end_s && *end_s < *start_s) end_s.reset();  // another pod's, where no uid tells them apart
  job.running = !end_s;
  job.window.end_ms = end_s ? std::llround(*end_s * 1000) : now_ms;
  for (const auto& s : source.series(tsdb::selector("kube_pod_info", pod), job.window)) {
    const std::string* node = s.count("node") != 0 ? &s.at("node") : nullptr;
    if (node != nullptr && !node->empty() &&
        std::find(job.nodes.begin(), job.nodes.end(), *node) == job.nodes.end()) {
      job.nodes.push_back(*node);
    }
  }
  if (job.nodes.empty()) {
    throw Error(fmt::format("kube-state-metrics names no node for pod {}", namespace_and_name),
                "kube_pod_info has no node label for it in the pod's window",
                "a pod that was never scheduled used no GPU");
  }
  return job;
}

}  // namespace gpuscope::app
