#include "load/extras.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <regex>

#include "analyze/processes.hpp"
#include "analyze/work_units.hpp"
#include "core/error.hpp"
#include "load/loader.hpp"

namespace gpuscope::load {

using analyze::RunMeta;

void gather_processes(const store::RunReader& reader, const AnalysisSources& in,
                      const Source& source, std::vector<analyze::ProcessUse>& uses) {
  const std::vector<RunMeta>& metas = in.metas;
  analyze::RunProcesses run;
  run.run_id = metas[source.meta].run_id;
  run.samples = reader.process_samples(source.run_id);
  if (run.samples.empty()) return;
  run.processes = reader.processes(source.run_id);
  const RunMeta& meta = metas[source.meta];
  if (metas.size() > 1) {
    run.where = meta.host + (meta.rank ? fmt::format(" rank {} ", *meta.rank) : " ");
  }
  const RunClock& clock = source.clock;
  auto found = analyze::summarise_processes(
      run, [&clock](std::int64_t mono_ns) { return clock.at(mono_ns); });
  for (auto& use : found) uses.push_back(std::move(use));
}

void add_processes(analyze::Analysis& analysis, std::vector<analyze::ProcessUse> uses) {
  analysis.processes = std::move(uses);
  for (auto& finding : analyze::process_findings(analysis.processes)) {
    analysis.findings.push_back(std::move(finding));
  }
}

void gather_marks(const AnalysisSources& in, const Source& source, const LoadExtras& extras,
                  Marks& out) {
  const RunMeta& meta = in.metas[source.meta];
  const std::string where =
      in.metas.size() > 1 ? meta.host + (meta.rank ? fmt::format(" rank {}", *meta.rank) : "") : "";
  auto events = source.reader().events({source.run_id, std::nullopt});
  store::RunEvent e;
  while (events.next(e)) {
    std::string at = where;
    if (e.event.device_index) {
      at += fmt::format("{}GPU {}", at.empty() ? "" : " ", *e.event.device_index);
    }
    const double t = source.clock.at(e.event.mono_ns);
    if (!std::isnan(t))
      out.marks.push_back({t, std::string(e.event.kind.text()), e.event.detail, at});
  }
  auto output = source.reader().output({source.run_id, std::nullopt});
  store::RunOutputLine line;
  while (out.lines < extras.max_output_lines && output.next(line)) {
    const double t = source.clock.at(line.line.mono_ns);
    if (std::isnan(t)) continue;
    ++out.lines;
    out.marks.push_back(
        {t, line.line.stream == OutputStream::Stderr ? "stderr" : "stdout", line.line.text, where});
  }
}

std::vector<analyze::Mark> sorted_marks(Marks gathered) {
  std::stable_sort(gathered.marks.begin(), gathered.marks.end(),
                   [](const auto& a, const auto& b) { return a.t_s < b.t_s; });
  return std::move(gathered.marks);
}

std::optional<double> work_from_output(const std::vector<Source>& sources,
                                       const std::string& pattern) {
  const std::regex regex = analyze::compile_work_regex(pattern);
  double total = 0;
  std::size_t lines = 0, matches = 0;
  for (const auto& source : sources) {
    const store::RunReader::ReadTransaction transaction(source.reader());
    auto cursor = source.reader().output({source.run_id, std::nullopt});
    store::RunOutputLine line;
    while (cursor.next(line)) {
      ++lines;
      if (const auto amount = analyze::work_in_line(regex, line.line.text)) {
        total += *amount;
        ++matches;
      }
    }
  }
  if (lines == 0) {
    throw Error::usage("--work-regex needs the job's output, and none was recorded", {},
                       "profile with --capture-output, or give --work-units N");
  }
  if (matches == 0) {
    throw Error::usage(
        fmt::format("--work-regex '{}' matched none of the {} output lines", pattern, lines), {},
        "check the pattern against the output (the output table)");
  }
  return total;
}

std::vector<std::string> saturation_notes(const analyze::Analysis& analysis) {
  const bool hosts = analysis.runs.size() > 1;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
  for (const auto& gpu : analysis.gpus) {
    if (!gpu.key.saturation_detail) continue;
    groups[{gpu.key.saturation_source.value_or(""), *gpu.key.saturation_detail}].push_back(
        gpu.key.label(hosts));
  }
  std::vector<std::string> notes;
  // Runs imported from gssr (docs/gssr.md): say what gssr did not record, once.
  const bool gssr = std::any_of(analysis.runs.begin(), analysis.runs.end(),
                                [](const auto& run) { return run.launcher == "gssr"; });
  if (gssr) {
    notes.push_back(
        "runs imported from gssr: gssr records no power, energy, temperatures or clocks, so "
        "there are no energy or carbon figures; its sample times are index x interval, not "
        "measured");
  }
  for (const auto& [key, labels] : groups) {
    const auto& [source, detail] = key;
    if (detail.starts_with("gssr")) continue;  // said above
    const std::string who = fmt::format("{}", fmt::join(labels, ", "));
    if (source.empty() && detail.starts_with("AMD SMI")) {
      notes.push_back(fmt::format(
          "{}: no saturation metrics ({}), so no efficiency score; activity and balance use "
          "the graphics activity AMD reports (gfx_activity, a busy percentage; docs/amd.md)",
          who, detail));
    } else if (source.empty()) {
      notes.push_back(fmt::format(
          "{}: no saturation metrics ({}), so no efficiency score; on Volta and Ampere they come "
          "from DCGM (docs/sources.md)",
          who, detail));
    } else if (source == "dcgm") {
      notes.push_back(fmt::format("{}: saturation metrics from DCGM ({})", who, detail));
    }
  }
  return notes;
}

}  // namespace gpuscope::load
