#include "ingest/monitoring/job_series.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "tsdb/promql.hpp"

namespace gpuscope::ingest {
namespace {

// UUIDs per request when asking about GPUs by UUID: keeps a GET's URL short.
constexpr std::size_t kUuidsPerRequest = 40;

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

// A label holding a list of jobs ("123,124", dcgm-exporter's hpc_job) matches when one is `id`.
std::string in_list_regex(const std::string& id) {
  return "(.*[, ])?" + tsdb::regex_quote(id) + "([, ].*)?";
}

std::pair<std::string, std::string> pod_of(const JobWindow& job) {
  std::string ns = job.pod_namespace.value_or("");
  std::string name = job.pod_name.value_or("");
  if (name.empty()) {
    const auto slash = job.id.find('/');
    name = slash == std::string::npos ? job.id : job.id.substr(slash + 1);
    if (ns.empty() && slash != std::string::npos) ns = job.id.substr(0, slash);
  }
  return {ns, name};
}

SeriesQuery label_query(Family family, const std::string& label, const std::string& op,
                        const std::string& value, const std::string& id) {
  SeriesQuery q;
  q.family = family;
  q.matchers = {{label, op, value}};
  q.how = fmt::format("{}'s label {}=\"{}\"", family_name(family), label, id);
  q.job_label = label;
  q.job_value = id;
  return q;
}

SeriesQuery pod_query(Family family, const std::string& pod_label, const std::string& ns_label,
                      const std::pair<std::string, std::string>& pod) {
  SeriesQuery q;
  q.family = family;
  q.matchers = {{pod_label, "=", pod.second}};
  if (!pod.first.empty()) q.matchers.push_back({ns_label, "=", pod.first});
  q.how = fmt::format("{}'s labels {}=\"{}\", {}=\"{}\"", family_name(family), pod_label,
                      pod.second, ns_label, pod.first);
  q.job_label = pod_label;
  q.job_value = pod.second;
  return q;
}

const std::string* label(const tsdb::Labels& labels, const std::string& key) {
  const auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

// The GPU a label set is of, merged into `found` (first query wins); duplicates from another
// family are said once per node.
void add_gpu(const tsdb::Labels& labels, std::size_t query, const JobSeries& js,
             const JobWindow& job, std::vector<JobGpu>& found, Notes& notes) {
  const std::string* name = label(labels, "__name__");
  if (name == nullptr || !family_of(*name) || *family_of(*name) != js.queries[query].family) {
    return;
  }
  JobGpu gpu;
  gpu.node = node_of(labels, job.nodes);
  gpu.index = gpu_index(labels);
  gpu.gpu = whole_gpu_key(labels, gpu.node);
  gpu.key = gpu_key(labels, job.nodes);
  if (const auto mig = mig_instance(labels)) {
    gpu.gpu_instance = mig->gpu_instance_id;
    gpu.mig_profile = mig->profile;
    gpu.mig_uuid = mig->mig_uuid;
  }
  if (const std::string* uuid = gpu_uuid(labels)) {
    gpu.uuid = *uuid;
    gpu.has_uuid = true;
    for (const char* key : {"uuid", "UUID", "gpu_uuid"}) {
      if (label(labels, key) == uuid) gpu.uuid_label = key;
    }
  } else {
    notes.once("no-uuid:" + gpu.node, gpu.node,
               fmt::format("{}'s series on {} carry no GPU UUID: its GPUs are told apart by the "
                           "exporter's index only",
                           family_name(js.queries[query].family), gpu.node));
  }
  auto it =
      std::find_if(found.begin(), found.end(), [&](const JobGpu& g) { return g.key == gpu.key; });
  if (it == found.end()) {
    gpu.query = query;
    found.push_back(std::move(gpu));
    it = std::prev(found.end());
  } else if (js.queries[it->query].family != js.queries[query].family) {
    notes.once("dup:" + it->node + ":" + std::string(family_name(js.queries[query].family)),
               it->node,
               fmt::format("the GPUs of {} are also exported by {}: {}'s series were read (one "
                           "family per GPU: gpuscope serve, then dcgm-exporter, then jobstats)",
                           it->node, family_name(js.queries[query].family),
                           family_name(js.queries[it->query].family)));
    return;
  } else if (it->query != query) {
    return;  // the same GPU under a second label of one family: the first query reads it
  }
  it->names.insert(*name);
  if (const std::string* model = gpu_model(labels)) it->name = *model;
  if (const std::string* pci = label(labels, "pci_bus_id"); pci != nullptr && !pci->empty()) {
    it->pci_bus_id = *pci;
  }
  const std::string* value =
      js.queries[query].job_label.empty() ? nullptr : label(labels, js.queries[query].job_label);
  if (value != nullptr && *value != js.queries[query].job_value) {
    notes.once("list:" + it->key, it->node,
               fmt::format("GPU {} on {} was labelled with several jobs at once ({}=\"{}\"): its "
                           "samples are counted for this job, the exporter could not tell the "
                           "jobs apart",
                           it->key, it->node, js.queries[query].job_label, *value));
  }
}

// The nodes as a regular expression on a node label's value: the short name, any domain, and
// for `instance` any port.
std::string nodes_regex(const std::vector<std::string>& nodes, bool instance) {
  std::vector<std::string> names;
  for (const auto& n : nodes) names.push_back(tsdb::regex_quote(short_host(n)));
  return fmt::format("(?i)({})(\\..*)?{}", join(names, "|"), instance ? "(:[0-9]+)?" : "");
}

// The first node label of `family` under which `nodes` have series, and those series.
std::optional<std::pair<SeriesQuery, std::vector<tsdb::Labels>>> host_query(
    tsdb::Source& source, Family family, const std::vector<std::string>& nodes,
    const tsdb::Window& window) {
  for (const auto key : kNodeLabels) {
    SeriesQuery q;
    q.family = family;
    q.matchers = {{std::string(key), "=~", nodes_regex(nodes, key == "instance")}};
    q.how = fmt::format("{}'s series of the nodes (label {})", family_name(family), key);
    auto labels = source.series(q.selector(names_regex(family)), window);
    if (!labels.empty()) return std::make_pair(std::move(q), std::move(labels));
  }
  return std::nullopt;
}

std::vector<std::string> nodes_without(const std::vector<std::string>& nodes,
                                       const std::vector<JobGpu>& gpus) {
  std::vector<std::string> out;
  for (const auto& n : nodes) {
    if (std::none_of(gpus.begin(), gpus.end(), [&](const JobGpu& g) { return g.node == n; })) {
      out.push_back(n);
    }
  }
  return out;
}

// The times each series' value was `id` (jobstats' nvidia_gpu_jobId), as spans of scrapes, by
// GPU or MIG instance (gpu_key: a GPU's instances share its UUID).
std::map<std::string, std::vector<Span>> jobid_times(const std::vector<tsdb::Series>& series,
                                                     double id,
                                                     const std::vector<std::string>& nodes) {
  std::map<std::string, std::vector<Span>> out;
  for (const auto& s : series) {
    if (gpu_uuid(s.labels) == nullptr) continue;
    const std::string key = gpu_key(s.labels, nodes);
    std::optional<Span> open;
    for (const auto& p : s.points) {
      if (p.value == id) {
        open = open ? Span{open->first, p.t_ms} : Span{p.t_ms, p.t_ms};
      } else if (open) {
        out[key].push_back(*open);
        open.reset();
      }
    }
    if (open) out[key].push_back(*open);
  }
  return out;
}

// jobstats' nvidia_gpu_jobId series of `nodes`: the GPUs whose value was the job id, with the
// times it was.
void find_by_jobid_value(tsdb::Source& source, const JobWindow& job,
                         const std::vector<std::string>& nodes, JobSeries& js, Notes& notes) {
  char* end = nullptr;
  const double id = std::strtod(job.id.c_str(), &end);
  if (job.id.empty() || end == nullptr || *end != '\0' || !std::isfinite(id)) return;
  auto hosts = host_query(source, Family::Jobstats, nodes, job.window);
  if (!hosts) return;
  const std::string sel = tsdb::selector([&] {
    auto m = hosts->first.matchers;
    m.insert(m.begin(), tsdb::Matcher{"__name__", "=", std::string(kJobstatsJobId)});
    return m;
  }());
  const auto times = jobid_times(source.raw(sel, job.window, 1'000'000), id, job.nodes);
  if (times.empty()) return;
  hosts->first.how = fmt::format("{}'s nvidia_gpu_jobId series equal to {}",
                                 family_name(Family::Jobstats), job.id);
  js.queries.push_back(hosts->first);
  const std::size_t q = js.queries.size() - 1;
  for (const auto& labels : hosts->second) {
    if (gpu_uuid(labels) == nullptr || !times.contains(gpu_key(labels, job.nodes))) continue;
    add_gpu(labels, q, js, job, js.gpus, notes);
  }
  for (auto& gpu : js.gpus) {
    if (gpu.query == q && times.contains(gpu.key)) gpu.job_times = times.at(gpu.key);
  }
}

// Every GPU of `nodes`, from the first family that has series of them, node by node.
void find_by_hosts(tsdb::Source& source, const JobWindow& job, std::vector<std::string> nodes,
                   JobSeries& js, Notes& notes) {
  for (Family family : kFamilies) {
    if (nodes.empty()) return;
    auto hosts = host_query(source, family, nodes, job.window);
    if (!hosts) continue;
    js.queries.push_back(std::move(hosts->first));
    for (const auto& labels : hosts->second) {
      if (std::find(nodes.begin(), nodes.end(), node_of(labels, job.nodes)) == nodes.end()) {
        continue;  // a node an earlier family had
      }
      add_gpu(labels, js.queries.size() - 1, js, job, js.gpus, notes);
    }
    nodes = nodes_without(nodes, js.gpus);
  }
}

// The label sets of series matching `matchers` and the GPUs' UUIDs, in requests of a few UUIDs.
std::vector<tsdb::Labels> by_uuid(tsdb::Source& source, const std::string& names,
                                  std::vector<tsdb::Matcher> matchers,
                                  const std::string& uuid_label,
                                  const std::vector<std::string>& uuids, const tsdb::Window& w) {
  std::vector<tsdb::Labels> out;
  for (std::size_t i = 0; i < uuids.size(); i += kUuidsPerRequest) {
    std::vector<std::string> part;
    for (std::size_t k = i; k < std::min(uuids.size(), i + kUuidsPerRequest); ++k) {
      part.push_back(tsdb::regex_quote(uuids[k]));
    }
    auto m = matchers;
    m.insert(m.begin(), tsdb::Matcher{"__name__", "=~", names});
    m.push_back({uuid_label, "=~", join(part, "|")});
    auto got = source.series(tsdb::selector(m), w);
    out.insert(out.end(), got.begin(), got.end());
  }
  return out;
}

// GPUs a label query found that carried another job's label too during the window (the
// exporter labels a GPU with the workload of the moment): said, as only this job's samples
// are read.
void say_shared(tsdb::Source& source, const JobWindow& job, JobSeries& js, Notes& notes) {
  for (std::size_t q = 0; q < js.queries.size(); ++q) {
    const SeriesQuery& query = js.queries[q];
    if (query.job_label.empty()) continue;
    std::map<std::string, std::set<std::string>> uuids_by_label;
    for (const auto& g : js.gpus) {
      if (g.query == q && g.has_uuid) uuids_by_label[g.uuid_label].insert(g.uuid);
    }
    for (const auto& [uuid_label, uuid_set] : uuids_by_label) {
      const std::vector<tsdb::Matcher> others = {{query.job_label, "!=", ""},
                                                 {query.job_label, "!=", query.job_value}};
      const std::vector<std::string> uuids(uuid_set.begin(), uuid_set.end());
      // By GPU, or by MIG instance: another job on another instance of the GPU shares nothing.
      std::map<std::string, std::set<std::string>> other_jobs;
      for (const auto& labels :
           by_uuid(source, names_regex(query.family), others, uuid_label, uuids, job.window)) {
        const auto other = labels.find(query.job_label);
        if (other == labels.end()) {  // asked for {label!=""}: the server's answer is not the API's
          throw Error(
              "the monitoring server answered /api/v1/series in an unknown shape",
              fmt::format("a series asked for with {0}!=\"\" has no {0} label", query.job_label),
              "check the URL: is it a Prometheus-API server?");
        }
        other_jobs[gpu_key(labels, job.nodes)].insert(other->second);
      }
      for (auto& g : js.gpus) {
        if (g.query != q || !other_jobs.contains(g.key)) continue;
        g.shared = true;
        std::vector<std::string> list(other_jobs[g.key].begin(), other_jobs[g.key].end());
        notes.once(
            "shared:" + g.key, g.node,
            fmt::format("GPU {} on {} was shared: it was labelled {}=\"{}\" during the "
                        "window too; only the samples labelled {} are read",
                        g.key, g.node, query.job_label, join(list, "\", \""), query.job_value));
      }
    }
  }
}

// The GPUs of the job's MIG instances that no query found: their own series (the GPU's UUID,
// no instance label), which carry the GPU's power, energy, temperature and clocks and no job
// label (the GPU runs no process itself), read as the GPU's whole window. dcgm-exporter in its
// default mode has none: the GPU is then made from its instances' series (job_runs).
void find_mig_parents(tsdb::Source& source, const JobWindow& job, JobSeries& js, Notes& notes) {
  std::map<std::pair<Family, std::string>, std::set<std::string>> wanted;  // by family, label
  for (const auto& g : js.gpus) {
    if (!g.gpu_instance || !g.has_uuid) continue;
    if (std::any_of(js.gpus.begin(), js.gpus.end(),
                    [&](const JobGpu& o) { return o.key == g.gpu; })) {
      continue;
    }
    wanted[{js.queries[g.query].family, g.uuid_label}].insert(g.uuid);
  }
  for (const auto& [by, uuid_set] : wanted) {
    const std::vector<std::string> uuids(uuid_set.begin(), uuid_set.end());
    for (std::size_t i = 0; i < uuids.size(); i += kUuidsPerRequest) {
      std::vector<std::string> part;
      for (std::size_t k = i; k < std::min(uuids.size(), i + kUuidsPerRequest); ++k) {
        part.push_back(tsdb::regex_quote(uuids[k]));
      }
      SeriesQuery q;
      q.family = by.first;
      q.matchers = {{by.second, "=~", join(part, "|")}};
      for (const auto l : kMigInstanceLabels) q.matchers.push_back({std::string(l), "=", ""});
      q.how = fmt::format("{}'s series of the GPUs of the job's MIG instances (label {})",
                          family_name(by.first), by.second);
      const auto found = source.series(q.selector(names_regex(q.family)), job.window);
      if (found.empty()) continue;
      js.queries.push_back(std::move(q));
      for (const auto& labels : found) {
        add_gpu(labels, js.queries.size() - 1, js, job, js.gpus, notes);
      }
    }
  }
}

// gpuscope serve's GPU names come on gpuscope_gpu_info, which carries no job label; a MIG
// instance's (" MIG 1g.10gb") on the one with its gpu_instance_id.
void fill_gpuscope_names(tsdb::Source& source, const JobWindow& job, JobSeries& js) {
  std::set<std::string> uuid_set;
  for (const auto& g : js.gpus) {
    if (g.has_uuid && g.uuid_label == "uuid" && !g.name &&
        js.queries[g.query].family == Family::Gpuscope) {
      uuid_set.insert(g.uuid);
    }
  }
  if (uuid_set.empty()) return;
  const std::vector<std::string> uuids(uuid_set.begin(), uuid_set.end());
  for (const auto& labels : by_uuid(source, "gpuscope_gpu_info", {}, "uuid", uuids, job.window)) {
    const std::string key = gpu_key(labels, job.nodes);
    for (auto& g : js.gpus) {
      if (g.key != key || js.queries[g.query].family != Family::Gpuscope) continue;
      if (const std::string* n = label(labels, "name")) g.name = *n;
      if (const std::string* p = label(labels, "pci_bus_id")) g.pci_bus_id = *p;
    }
  }
}

}  // namespace

void Notes::once(const std::string& key, const std::string& node, std::string text) {
  if (!key.empty() && !keys_.insert(key).second) return;
  notes_.emplace_back(node, std::move(text));
}

std::vector<std::string> Notes::texts() const {
  std::vector<std::string> out;
  for (const auto& n : notes_) out.push_back(n.second);
  return out;
}

std::vector<std::string> Notes::of_node(const std::string& node) const {
  std::vector<std::string> out;
  for (const auto& n : notes_) {
    if (n.first.empty() || n.first == node) out.push_back(n.second);
  }
  return out;
}

std::string SeriesQuery::selector(const std::string& names) const {
  std::vector<tsdb::Matcher> all = {{"__name__", "=~", names}};
  all.insert(all.end(), matchers.begin(), matchers.end());
  return tsdb::selector(all);
}

std::vector<SeriesQuery> label_queries(const JobWindow& job) {
  std::vector<SeriesQuery> out;
  if (job.kind == "slurm") {
    const std::string list = in_list_regex(job.id);
    for (const JobLabel& j : kSlurmJobLabels) {
      for (const char* prefix : {"", "exported_"}) {
        out.push_back(label_query(j.family, prefix + std::string(j.label), j.list ? "=~" : "=",
                                  j.list ? list : job.id, job.id));
      }
    }
  } else if (job.kind == "pod") {
    const auto pod = pod_of(job);
    for (const PodLabels& p : kPodLabels) {
      out.push_back(pod_query(p.family, std::string(p.pod), std::string(p.pod_namespace), pod));
    }
  }
  return out;
}

JobSeries find_job_series(tsdb::Source& source, const JobWindow& job, Notes& notes) {
  JobSeries js;
  js.queries = label_queries(job);
  for (std::size_t q = 0; q < js.queries.size(); ++q) {
    const auto& query = js.queries[q];
    for (const auto& labels :
         source.series(query.selector(names_regex(query.family)), job.window)) {
      add_gpu(labels, q, js, job, js.gpus, notes);
    }
  }
  if (!js.gpus.empty()) say_shared(source, job, js, notes);
  auto missing = nodes_without(job.nodes, js.gpus);
  if (job.kind == "slurm" && !missing.empty()) {
    find_by_jobid_value(source, job, missing, js, notes);
    missing = nodes_without(job.nodes, js.gpus);
  }
  const bool by_hosts = job.kind == "hosts" || job.exclusive;
  if (by_hosts && !missing.empty()) {
    find_by_hosts(source, job, missing, js, notes);
    auto still = nodes_without(job.nodes, js.gpus);
    std::vector<std::string> taken;
    for (const auto& n : missing) {
      if (std::find(still.begin(), still.end(), n) == still.end()) taken.push_back(n);
    }
    if (job.kind != "hosts" && !taken.empty()) {
      notes.once("exclusive", "",
                 fmt::format("no series names job {} on {}: as the job had its nodes to itself, "
                             "every GPU of them in the window is taken as the job's (GPUs it did "
                             "not use count as idle)",
                             job.id, join(taken, ",")));
    }
    missing = std::move(still);
  }
  js.nodes_missing = missing;
  find_mig_parents(source, job, js, notes);
  fill_gpuscope_names(source, job, js);
  return js;
}

}  // namespace gpuscope::ingest
