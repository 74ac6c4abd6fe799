// Output-defined phases (docs/phases.md, "Phases from the job's output"): regular expressions
// over the job's output lines, the sweep's window markers generalised.
//
//   --phase 'epoch=epoch (\d+) start'     each matching line begins an "epoch" (instance: the
//                                         first group), ending the previous one
//   --phase-end 'epoch=epoch \d+ done'    and this ends it (else the next begin or the job's end)
//   --phase 'epoch (\d+) start'           the same; the name is the pattern's leading words
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "phases/phase_tracker.hpp"

namespace gpuscope::phases {

struct OutputPhasePattern {
  std::string name;
  std::string begin_text;
  std::regex begin;
  std::optional<std::regex> end;
  std::string end_text;
};

// The patterns of --phase SPEC... and --phase-end SPEC...: SPEC is NAME=REGEX, or REGEX alone
// (named by its leading literal words: "epoch (\d+) start" is "epoch"). Every --phase-end must
// name a phase given by --phase. Throws Error::usage naming the option and the problem (a bad
// regular expression, one past gpuscope's size limits, an end without a begin, a name twice).
std::vector<OutputPhasePattern> parse_output_phases(const std::vector<std::string>& begins,
                                                    const std::vector<std::string>& ends);

// The name REGEX alone is given: its leading literal words, up to the first special character,
// trimmed ("epoch (\d+) start" → "epoch"); the whole pattern when that leaves nothing.
std::string name_from_pattern(const std::string& pattern);

// Matches lines against the patterns and feeds the tracker: a begin line ends the open phase of
// its name (if any) and begins the next; an end line ends it.
class OutputPhaseMatcher {
 public:
  OutputPhaseMatcher(std::vector<OutputPhasePattern> patterns, PhaseTracker& tracker);

  void on_line(const std::string& text, std::int64_t mono_ns);
  // The job ended at `mono_ns`: a phase without --phase-end ends there as it would at its next
  // begin (a closed phase; one with an end pattern that never matched stays open for the tracker
  // to close as never ended).
  void finish(std::int64_t mono_ns);
  bool empty() const { return patterns_.empty(); }

 private:
  std::vector<OutputPhasePattern> patterns_;
  std::vector<std::int64_t> counts_;  // begins seen per pattern (the instance without a group)
  PhaseTracker& tracker_;
};

}  // namespace gpuscope::phases
