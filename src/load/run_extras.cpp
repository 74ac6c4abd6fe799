#include "load/run_extras.hpp"

#include <cmath>
#include <iterator>
#include <utility>

#include "core/event_kinds.hpp"
#include "load/extras.hpp"
#include "load/node_energy.hpp"

namespace gpuscope::load {
namespace {

bool is_health(EventKind kind) {
  return kind == EventKind::Xid || kind == EventKind::Ecc || kind == EventKind::RowRemap ||
         kind == EventKind::PcieReplays || kind == EventKind::NvlinkErrors;
}

std::optional<double> run_end_s(const Source& source) {
  if (!source.clock.end_mono_ns) return std::nullopt;
  const double t = source.clock.at(*source.clock.end_mono_ns);
  return std::isnan(t) ? std::nullopt : std::optional<double>(t);
}

// One GPU's first and last health samples, on the analysis' time axis.
analyze::GpuHealth health_span(const Source& source, const HealthRow& first,
                               const HealthRow& last) {
  analyze::GpuHealth health;
  health.first_t_s = source.clock.at(first.mono_ns);
  health.last_t_s = source.clock.at(last.mono_ns);
  for (std::size_t m = 0; m < kHealthMetricCount; ++m) {
    const auto metric = static_cast<HealthMetric>(m);
    health.first[m] = first.get(metric);
    health.last[m] = last.get(metric);
  }
  health.run_end_s = run_end_s(source);
  return health;
}

template <typename T>
void append(std::vector<T>& to, std::vector<T>&& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

RunExtras read_extras(const store::RunReader& reader, const AnalysisSources& in,
                      const Source& source) {
  RunExtras out;
  const store::RunReader::ReadTransaction transaction(reader);
  auto cursor = reader.events({source.run_id, std::nullopt});
  store::RunEvent e;
  while (cursor.next(e)) {
    const EventKind kind = e.event.kind;
    if ((kind != EventKind::GpuLost && kind != EventKind::MigInstance && !is_health(kind)) ||
        !e.event.device_index) {
      continue;
    }
    out.events.push_back(std::move(e));
  }
  // In (device, time) order: each device's run of rows gives its first and last.
  const std::vector<HealthRow> rows = reader.health_samples(source.run_id);
  for (std::size_t k = 0; k < rows.size();) {
    std::size_t end = k;
    while (end + 1 < rows.size() && rows[end + 1].device_index == rows[k].device_index) ++end;
    out.health.emplace_back(rows[k], rows[end]);
    k = end + 1;
  }
  gather_processes(reader, in, source, out.processes);
  gather_node_energy(reader, in, source, out.node);
  return out;
}

void feed_extras(analyze::Analyzer& analyzer, const AnalysisSources& in, const Source& source,
                 RunExtras&& extras, std::vector<analyze::ProcessUse>& processes,
                 analyze::NodeEnergyInput& node) {
  const bool with_host = in.metas.size() > 1;
  for (const store::RunEvent& e : extras.events) {
    const EventKind kind = e.event.kind;
    const double t = source.clock.at(e.event.mono_ns);
    if (std::isnan(t)) continue;
    const auto key = key_of(source, in.metas[source.meta], *e.event.device_index);
    if (kind == EventKind::MigInstance) {
      analyzer.note_mig_change(key, t, e.event.detail, with_host);
    } else if (kind == EventKind::GpuLost) {
      analyzer.note_gpu_lost(key, t, with_host);
    } else {
      analyzer.note_health_event(key, {{}, t, kind, e.event.detail, run_end_s(source)}, with_host);
    }
  }
  for (const auto& [first, last] : extras.health) {
    analyze::GpuHealth health = health_span(source, first, last);
    if (!std::isnan(health.first_t_s) && !std::isnan(health.last_t_s)) {
      analyzer.add_health(key_of(source, in.metas[source.meta], first.device_index),
                          std::move(health), with_host);
    }
  }
  append(processes, std::move(extras.processes));
  append(node.domains, std::move(extras.node.domains));
  append(node.cpu_times, std::move(extras.node.cpu_times));
  append(node.phases, std::move(extras.node.phases));
}

}  // namespace gpuscope::load
