#include "ingest/job_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/version.hpp"

namespace gpuscope::ingest {
namespace {

std::vector<std::string> nodes_in_order(const JobWindow& job, const JobSeries& js) {
  std::vector<std::string> out;
  for (const auto& n : job.nodes) {
    if (std::any_of(js.gpus.begin(), js.gpus.end(), [&](const JobGpu& g) { return g.node == n; })) {
      out.push_back(n);
    }
  }
  for (const auto& g : js.gpus) {
    if (std::find(out.begin(), out.end(), g.node) == out.end()) out.push_back(g.node);
  }
  return out;
}

bool has_saturation(const GpuTimeline& t) {
  for (Metric m : {Metric::SmActivePct, Metric::TensorActivePct, Metric::DramActivePct,
                   Metric::GraphicsActivePct}) {
    if (t.metrics.test(static_cast<std::size_t>(m))) return true;
  }
  return false;
}

// The node's GPUs as devices: the exporter's index where it is unique on the node, else in
// UUID order.
std::vector<DeviceDescription> devices_of(const std::vector<const JobGpu*>& gpus,
                                          const JobSeries& js,
                                          const std::map<std::string, GpuTimeline>& timelines) {
  std::set<unsigned> indices;
  bool unique = true;
  for (const auto* g : gpus) unique = unique && g->index && indices.insert(*g->index).second;
  std::vector<DeviceDescription> devices;
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    const JobGpu& g = *gpus[k];
    const GpuTimeline& t = timelines.at(g.key);
    DeviceDescription d;
    d.index = unique ? *g.index : static_cast<unsigned>(k);
    if (g.has_uuid) d.uuid = g.key;
    d.name = g.name;
    d.pci_bus_id = g.pci_bus_id;
    if (t.memory_total_bytes)
      d.memory_total_bytes = static_cast<std::uint64_t>(*t.memory_total_bytes);
    if (has_saturation(t)) {
      const Family f = js.queries[g.query].family;
      // dcgm-exporter reads DCGM and jobstats' exporter GPM; serve's series came from either,
      // which its exposition does not say.
      d.saturation_source = f == Family::Dcgm ? "dcgm" : f == Family::Jobstats ? "gpm" : "exporter";
      d.saturation_detail =
          fmt::format("{}'s series, read from the monitoring database", family_name(f));
    }
    devices.push_back(std::move(d));
  }
  return devices;
}

RunInfo run_info(const JobWindow& job, const std::string& node, const std::string& origin,
                 double resolution_s) {
  RunInfo info;
  info.label = job.name.value_or(job.kind == "hosts" ? "hosts" : "job " + job.id);
  info.host = node;
  info.user = job.user.value_or("");
  info.start_wall_ns = job.window.start_ms * 1'000'000;
  info.tool_version = fmt::format("gpuscope {} (read from a monitoring database)", kVersion);
  info.sampling_interval_ns = std::llround(resolution_s * 1e9);
  info.origin = origin;
  if (job.kind == "slurm") {
    info.slurm.job_id = job.id;
    info.slurm.node_name = node;
    info.ranks.launcher = "slurm";
    info.ranks.job_id = job.id;
  } else if (job.kind == "pod") {
    info.ranks.launcher = "kubernetes";
    info.ranks.pod_name = job.pod_name;
    info.ranks.pod_namespace = job.pod_namespace;
    if (!info.ranks.pod_name) {
      const auto slash = job.id.find('/');
      info.ranks.pod_name = slash == std::string::npos ? job.id : job.id.substr(slash + 1);
      if (slash != std::string::npos) info.ranks.pod_namespace = job.id.substr(0, slash);
    }
  }
  info.ranks.node_name = node;
  return info;
}

void say_energy(const std::string& node, const std::vector<const JobGpu*>& gpus,
                const std::map<std::string, GpuTimeline>& timelines, Notes& notes) {
  bool counter = false, power = false;
  for (const auto* g : gpus) {
    const auto& m = timelines.at(g->key).metrics;
    counter = counter || m.test(static_cast<std::size_t>(Metric::EnergyMj));
    power = power || m.test(static_cast<std::size_t>(Metric::PowerW));
  }
  if (!counter && power) {
    notes.once("energy:" + node, node,
               fmt::format("no energy counter was exported on {}: its energy is power "
                           "integrated over the scrapes",
                           node));
  } else if (!counter) {
    notes.once("energy:" + node, node,
               fmt::format("neither power nor an energy counter was exported on {}: no energy "
                           "figures for it",
                           node));
  }
}

}  // namespace

std::int64_t write_job_runs(const JobWindow& job, const JobSeries& js,
                            const std::map<std::string, GpuTimeline>& timelines,
                            const std::string& origin, double resolution_s, Notes& notes,
                            RunTarget& target, std::size_t& runs) {
  std::int64_t total = 0;
  runs = 0;
  for (const auto& node : nodes_in_order(job, js)) {
    std::vector<const JobGpu*> gpus;
    for (const auto& g : js.gpus) {
      if (g.node == node && !timelines.at(g.key).rows.empty()) gpus.push_back(&g);
    }
    if (gpus.empty()) {
      notes.once(
          "empty:" + node, node,
          fmt::format("the series of {} hold no sample in the window: not in the analysis", node));
      continue;
    }
    say_energy(node, gpus, timelines, notes);
    const std::vector<DeviceDescription> devices = devices_of(gpus, js, timelines);
    const RunInfo info = run_info(job, node, origin, resolution_s);
    auto writer = target.add_run(info, devices);
    std::int64_t samples = 0;
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      for (SampleRow row : timelines.at(gpus[k]->key).rows) {
        row.device_index = devices[k].index;
        row.mono_ns = row.wall_ns - info.start_wall_ns;
        writer->push(row);
        ++samples;
      }
    }
    RunEnd end;
    end.status = job.running ? RunStatus::Running : RunStatus::Finished;
    end.end_wall_ns = job.window.end_ms * 1'000'000;
    end.end_mono_ns = end.end_wall_ns - info.start_wall_ns;
    end.samples_taken = samples;
    end.problems = notes.of_node(node);
    target.finish_run(*writer, end, gpus.size());
    total += samples;
    ++runs;
  }
  return total;
}

}  // namespace gpuscope::ingest
