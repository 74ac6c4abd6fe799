// What an analysis reads from run databases beside the samples: the processes on the GPUs,
// job events and output lines for the report's timeline, the work done (--work-regex), and the
// notes on where each GPU's saturation metrics came from.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "app/analysis_sources.hpp"

namespace gpuscope::app {

struct LoadExtras;

// Which processes used each GPU (schema 1.3), and the diagnosis of those outside the job.
void read_processes(analyze::Analysis& analysis, const AnalysisSources& in);

// Job events and captured output lines, for the report's timeline; output capped as `extras`
// says.
std::vector<analyze::Mark> read_marks(const AnalysisSources& in, const LoadExtras& extras);

// Total work from the captured output: the first group of every match of `pattern`, summed.
// Throws Error::usage when no output was recorded or nothing matched.
std::optional<double> work_from_output(const std::vector<Source>& sources,
                                       const std::string& pattern);

// One note per distinct saturation source of the GPUs analysed, so the reader knows where SM
// active, tensor and DRAM came from, or why they are missing (docs/sources.md). Files older than
// schema 1.6 do not say: no note.
std::vector<std::string> saturation_notes(const analyze::Analysis& analysis);

}  // namespace gpuscope::app
