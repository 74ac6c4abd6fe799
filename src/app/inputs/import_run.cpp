#include "app/inputs/import_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "core/output_check.hpp"
#include "ingest/import.hpp"
#include "store/merge.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::app {

int run_import(const ImportRun& o) {
  OutputCheck check;
  check.force = o.force;
  for (const auto& input : o.inputs) check.inputs.emplace_back(input);
  const std::filesystem::path output = check_output_file(o.output, check);
  const std::vector<std::filesystem::path> inputs(o.inputs.begin(), o.inputs.end());
  const ingest::ImportSummary imported = ingest::import_inputs(inputs, output, o.force, o.read);
  for (const auto& note : imported.notes) {
    fmt::print(stderr, "gpuscope: note: {}\n", util::visible(note));  // quotes the files
  }
  fmt::print(stderr, "gpuscope: imported {} run{} ({} GPU{}, {} samples) from {} into {}\n",
             imported.runs, imported.runs == 1 ? "" : "s", imported.gpus,
             imported.gpus == 1 ? "" : "s", imported.samples, fmt::join(imported.formats, ", "),
             output.string());
  return 0;
}

int run_merge(const ImportRun& o) {
  const ingest::RunInputs resolved(o.inputs, o.read);  // foreign data: docs/gssr.md
  for (const auto& note : resolved.notes()) {
    fmt::print(stderr, "gpuscope: note: {}\n", util::visible(note));
  }
  std::vector<std::filesystem::path> inputs(resolved.paths().begin(), resolved.paths().end());
  const store::MergeSummary summary = store::merge(o.output, inputs, o.force);
  fmt::print(stderr, "gpuscope: merged {} run{} from {} file{} into {} ({} samples)\n",
             summary.runs, summary.runs == 1 ? "" : "s", summary.inputs.size(),
             summary.inputs.size() == 1 ? "" : "s", o.output, summary.rows.samples);
  return 0;
}

}  // namespace gpuscope::app
