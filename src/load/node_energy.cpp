#include "load/node_energy.hpp"

#include <cmath>
#include <map>

#include "analyze/carbon.hpp"

namespace gpuscope::load {

namespace {

// One run's domains with their readings on the analysis' axis (readings outside the run dropped).
void read_domains(const store::RunReader& reader, const Source& source, const std::string& host,
                  std::vector<analyze::NodeDomainSeries>& out) {
  const auto domains = reader.node_domains(source.run_id);
  if (domains.empty()) return;
  std::map<unsigned, std::size_t> slot;
  for (const auto& d : domains) {
    slot[d.domain] = out.size();
    out.push_back({host, source.meta, d, {}, {}, {}});
  }
  for (const auto& s : reader.node_samples(source.run_id)) {
    const auto it = slot.find(s.domain);
    const double t = source.clock.at(s.mono_ns);
    if (it == slot.end() || std::isnan(t)) continue;
    auto& series = out[it->second];
    if (!series.t_s.empty() && t <= series.t_s.back()) continue;  // time must advance
    series.t_s.push_back(t);
    series.wall_ns.push_back(s.wall_ns);
    series.joules.push_back(s.joules);
  }
}

void read_phases(const store::RunReader& reader, const Source& source,
                 std::vector<analyze::NodePhaseSpan>& out) {
  reader.for_each_phase(source.run_id, [&](Phase&& p) {
    if (p.point) return;
    const double a = source.clock.at(p.start_mono_ns), b = source.clock.at(p.end_mono_ns);
    if (std::isnan(a) || std::isnan(b)) return;
    out.push_back({p.name, std::string(to_text(p.source)), source.meta, a, b});
  });
}

double flat_intensity(const analyze::AnalysisOptions& options) {
  if (options.carbon_g_per_kwh) return *options.carbon_g_per_kwh;
  const auto region = analyze::find_region(options.region.value_or("WORLD"));
  return region ? region->g_per_kwh : analyze::find_region("WORLD")->g_per_kwh;
}

}  // namespace

void gather_node_energy(const store::RunReader& reader, const AnalysisSources& in,
                        const Source& source, analyze::NodeEnergyInput& input) {
  const auto& meta = in.metas[source.meta];
  const std::size_t before = input.domains.size();
  read_domains(reader, source, meta.host, input.domains);
  if (input.domains.size() == before) return;
  input.cpu_times.push_back({meta.host, source.meta, reader.node_cpu_times(source.run_id)});
  read_phases(reader, source, input.phases);
}

void add_node_energy(analyze::Analysis& analysis, analyze::NodeEnergyInput input,
                     const analyze::AnalysisOptions& options) {
  if (input.domains.empty()) return;
  input.window_start_s = analysis.window.start_s;
  input.window_end_s = analysis.window.end_s;
  input.gpu_j =
      analysis.energy_counter_j ? analysis.energy_counter_j : analysis.energy_integrated_j;
  if (analysis.carbon) input.gpu_carbon_g = analysis.carbon->grams;
  if (options.grid_series) input.series = &*options.grid_series;
  input.flat_g_per_kwh = flat_intensity(options);
  input.pue = options.pue;
  if (analysis.phases) {
    for (const auto& name : analysis.phases->names) {
      input.phase_gpu_j.emplace_back(name.name, name.total.energy_j);
    }
  }
  analysis.node_energy = analyze::node_energy(input);
  if (analysis.node_energy) {
    const auto& notes = analysis.node_energy->notes;
    analysis.notes.insert(analysis.notes.end(), notes.begin(), notes.end());
  }
}

}  // namespace gpuscope::load
