#include "ingest/monitoring/job_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bitset>
#include <charconv>
#include <cmath>
#include <set>
#include <span>

#include "core/mig.hpp"
#include "core/version.hpp"
#include "ingest/value_screen.hpp"

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

// Metrics a GPU does not split between its MIG instances: dcgm-exporter repeats the GPU's value
// on each instance's series (DCGM answers them for the GPU), so they are the GPU's, once.
constexpr Metric kWholeGpuMetrics[] = {
    Metric::PowerW,          Metric::PowerInstantW,      Metric::PowerAverageW,
    Metric::ModulePowerW,    Metric::EnergyMj,           Metric::PowerLimitW,
    Metric::SmClockMhz,      Metric::MemClockMhz,        Metric::GraphicsClockMhz,
    Metric::TemperatureC,    Metric::MemoryTemperatureC, Metric::ClockEventReasons,
    Metric::PcieTxBytes,     Metric::PcieRxBytes,        Metric::PcieTxBytesPerS,
    Metric::PcieRxBytesPerS, Metric::NvlinkTxBytesPerS,  Metric::NvlinkRxBytesPerS};
// Not measured on a GPU in MIG mode: dcgm-exporter sends 0 on each instance's series.
constexpr Metric kNotInMig[] = {Metric::GpuUtilPct, Metric::MemUtilPct};

using MetricSet = std::bitset<kMetricCount>;

MetricSet set_of(std::span<const Metric> metrics) {
  MetricSet out;
  for (Metric m : metrics) out.set(static_cast<std::size_t>(m));
  return out;
}

// One device of a node's run: its description, the timeline its rows come from and which of
// their metrics are its own.
struct NodeDevice {
  DeviceDescription d;
  const JobGpu* source = nullptr;
  MetricSet keep;
};

// A whole GPU of the node: its own series, and its MIG instances' (by GPU instance id).
struct WholeGpu {
  const JobGpu* own = nullptr;
  std::vector<const JobGpu*> instances;
  const JobGpu& any() const { return own != nullptr ? *own : *instances.front(); }
};

std::vector<WholeGpu> whole_gpus(const std::vector<const JobGpu*>& gpus) {
  std::vector<std::pair<std::string, WholeGpu>> found;
  for (const auto* g : gpus) {
    auto it =
        std::find_if(found.begin(), found.end(), [&](const auto& f) { return f.first == g->gpu; });
    if (it == found.end()) it = found.insert(found.end(), {g->gpu, WholeGpu{}});
    if (g->gpu_instance) {
      it->second.instances.push_back(g);
    } else {
      it->second.own = g;
    }
  }
  std::vector<WholeGpu> out;
  for (auto& [key, w] : found) {
    std::sort(w.instances.begin(), w.instances.end(),
              [](const JobGpu* a, const JobGpu* b) { return *a->gpu_instance < *b->gpu_instance; });
    out.push_back(std::move(w));
  }
  return out;
}

// A GPU's (or instance's) description from its series.
DeviceDescription describe(const JobGpu& g, const JobSeries& js, const GpuTimeline& t) {
  DeviceDescription d;
  if (g.has_uuid) d.uuid = g.uuid;
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
  return d;
}

// Who a MIG instance is, from its labels: its profile (or, where only its name says, from the
// name) and the GPU instance's slices, the <g> of "<g>g.<mem>gb".
MigIdentity mig_identity(const JobGpu& g, unsigned parent) {
  MigIdentity mig;
  mig.parent_index = parent;
  mig.gpu_instance_id = *g.gpu_instance;
  mig.profile = g.mig_profile;
  if (!mig.profile && g.name) mig.profile = mig_profile_from_name(*g.name);
  if (mig.profile) {
    unsigned slices = 0;
    const auto& p = *mig.profile;
    const auto* end = p.data() + p.size();
    if (const auto r = std::from_chars(p.data(), end, slices);
        r.ec == std::errc() && r.ptr != end && *r.ptr == 'g' && slices > 0) {
      mig.gpu_slices = slices;
    }
  }
  return mig;
}

// A MIG instance as a device of its own, row index mig_device_index(GPU, GPU instance id).
NodeDevice instance_device(const JobGpu& g, unsigned parent, const JobSeries& js,
                           const GpuTimeline& t) {
  NodeDevice nd{describe(g, js, t), &g, ~(set_of(kWholeGpuMetrics) | set_of(kNotInMig))};
  // The exported UUID is its GPU's; its own MIG- UUID only where gpuscope serve says it.
  nd.d.uuid = g.mig_uuid;
  nd.d.index = mig_device_index(parent, *g.gpu_instance);
  nd.d.mig = mig_identity(g, parent);
  // dcgm-exporter's modelName is the GPU's; gpuscope_gpu_info names the instance itself.
  if (g.name && g.mig_profile && !mig_profile_from_name(*g.name)) {
    nd.d.name = *g.name + " MIG " + *g.mig_profile;
  }
  return nd;
}

// The GPU that MIG instances are part of, when no series of its own was exported (dcgm-exporter
// in its default mode): described from its first instance's series, whose power, energy,
// temperature and clocks (the GPU's, repeated on each instance) become the GPU's rows, once.
NodeDevice parent_device(const WholeGpu& w, unsigned index,
                         const std::map<std::string, GpuTimeline>& timelines, Notes& notes) {
  const MetricSet whole = set_of(kWholeGpuMetrics);
  const JobGpu* source = nullptr;
  for (const auto* i : w.instances) {
    if ((timelines.at(i->key).metrics & whole).any()) {
      source = i;
      break;
    }
  }
  const JobGpu& from = source != nullptr ? *source : *w.instances.front();
  NodeDevice nd{{}, &from, whole};
  nd.d.index = index;
  if (from.has_uuid) nd.d.uuid = from.uuid;
  nd.d.name = from.name;
  // An instance's own name ("<GPU> MIG 1g.10gb", gpuscope_gpu_info) less its profile.
  if (const auto at = from.name ? from.name->rfind(" MIG ") : std::string::npos;
      at != std::string::npos && mig_profile_from_name(*from.name)) {
    nd.d.name = from.name->substr(0, at);
  }
  nd.d.pci_bus_id = from.pci_bus_id;
  nd.d.mig_enabled = true;
  if (source == nullptr) {
    notes.once("mig-parent:" + from.gpu, from.node,
               fmt::format("GPU {} on {} is in MIG mode and no series of the GPU itself was "
                           "found: its power, energy, temperature and clocks are not known; its "
                           "instances keep their own activity and memory",
                           from.gpu, from.node));
    return nd;
  }
  notes.once("mig-parent:" + from.gpu, from.node,
             fmt::format("GPU {} on {} is in MIG mode and was exported only as its GPU "
                         "instances, each series repeating the GPU's power, energy, temperature "
                         "and clocks: they are read once, from GPU instance {}'s series, as GPU "
                         "{}'s own, never added up; its instances keep their own activity and "
                         "memory",
                         from.gpu, from.node, *from.gpu_instance, index));
  return nd;
}

// The node's GPUs and MIG instances as devices: a GPU by the exporter's index where it is
// unique on the node, else in order; an instance by its GPU's index and GPU instance id.
std::vector<NodeDevice> devices_of(const std::vector<const JobGpu*>& gpus, const JobSeries& js,
                                   const std::map<std::string, GpuTimeline>& timelines,
                                   Notes& notes) {
  const auto whole = whole_gpus(gpus);
  std::set<unsigned> indices;
  bool unique = true;
  for (const auto& w : whole)
    unique = unique && w.any().index && indices.insert(*w.any().index).second;
  std::vector<NodeDevice> devices;
  MetricSet all;
  all.set();
  for (std::size_t k = 0; k < whole.size(); ++k) {
    const WholeGpu& w = whole[k];
    const unsigned index = unique ? *w.any().index : static_cast<unsigned>(k);
    if (w.own != nullptr) {
      devices.push_back({describe(*w.own, js, timelines.at(w.own->key)), w.own, all});
      devices.back().d.index = index;
      if (!w.instances.empty()) devices.back().d.mig_enabled = true;
    } else {
      devices.push_back(parent_device(w, index, timelines, notes));
    }
    for (const auto* i : w.instances) {
      devices.push_back(instance_device(*i, index, js, timelines.at(i->key)));
      if ((timelines.at(i->key).metrics & set_of(kNotInMig)).any()) {
        notes.once("mig-util:" + i->gpu, i->node,
                   fmt::format("GPU {} on {} is in MIG mode, where GPU and memory utilization "
                               "are not measured (the exporter sends 0 for them): left out",
                               i->gpu, i->node));
      }
    }
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
    const std::vector<NodeDevice> node_devices = devices_of(gpus, js, timelines, notes);
    std::vector<DeviceDescription> devices;
    for (const auto& nd : node_devices) devices.push_back(nd.d);
    const RunInfo info = run_info(job, node, origin, resolution_s);
    auto writer = target.add_run(info, devices);
    std::int64_t samples = 0;
    ValueScreen screen;  // values no GPU can report, left out and said
    for (const auto& nd : node_devices) {
      for (SampleRow row : timelines.at(nd.source->key).rows) {
        row.present &= nd.keep;
        row.device_index = nd.d.index;
        screen.screen(row);
        if (row.present.none()) continue;
        row.mono_ns = row.wall_ns - info.start_wall_ns;
        writer->push(row);
        ++samples;
      }
    }
    for (auto& said : screen.said(node + ": ")) notes.once("range:" + said, node, said);
    RunEnd end;
    end.status = job.running ? RunStatus::Running : RunStatus::Finished;
    end.end_wall_ns = job.window.end_ms * 1'000'000;
    end.end_mono_ns = end.end_wall_ns - info.start_wall_ns;
    end.samples_taken = samples;
    end.problems = notes.of_node(node);
    target.finish_run(*writer, end, devices.size());
    total += samples;
    ++runs;
  }
  return total;
}

}  // namespace gpuscope::ingest
