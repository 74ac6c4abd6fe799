// What an analysis reads from run databases beside the samples: the processes on the GPUs,
// job events and output lines for the report's timeline, the work done (--work-regex), and the
// notes on where each GPU's saturation metrics came from.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "load/sources.hpp"

namespace gpuscope::load {

struct LoadExtras;

// Which processes used each run's GPUs (schema 1.3), gathered run by run from `reader` (its
// file, open for the other extras: run_extras.hpp), then set with the diagnosis of those outside
// the job.
void gather_processes(const store::RunReader& reader, const AnalysisSources& in,
                      const Source& source, std::vector<analyze::ProcessUse>& uses);
void add_processes(analyze::Analysis& analysis, std::vector<analyze::ProcessUse> uses);

// Job events and captured output lines for the report's timeline, gathered run by run (output
// capped as `extras` says), then in time order.
struct Marks {
  std::vector<analyze::Mark> marks;
  std::size_t lines = 0;  // output lines so far
};
void gather_marks(const AnalysisSources& in, const Source& source, const LoadExtras& extras,
                  Marks& out);
std::vector<analyze::Mark> sorted_marks(Marks gathered);

// Total work from the captured output: the first group of every match of `pattern`, summed.
// Throws Error::usage when no output was recorded or nothing matched.
std::optional<double> work_from_output(const std::vector<Source>& sources,
                                       const std::string& pattern);

// One note per distinct saturation source of the GPUs analysed, so the reader knows where SM
// active, tensor and DRAM came from, or why they are missing (docs/sources.md). Files older than
// schema 1.6 do not say: no note.
std::vector<std::string> saturation_notes(const analyze::Analysis& analysis);

}  // namespace gpuscope::load
