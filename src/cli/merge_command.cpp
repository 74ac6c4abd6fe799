// `gpuscope merge OUT.db INPUTS...`: one database from the per-rank files of a job.
#include <fmt/format.h>

#include <memory>

#include "app/gssr_import.hpp"
#include "cli/command.hpp"
#include "store/merge.hpp"

namespace gpuscope::cli {
namespace {

struct MergeOptions {
  std::string output;
  std::vector<std::string> inputs;
  bool force = false;
};

int run_merge(const MergeOptions& o) {
  const app::ResolvedInputs resolved(o.inputs);  // gssr data: docs/gssr.md
  std::vector<std::filesystem::path> inputs(resolved.paths().begin(), resolved.paths().end());
  const store::MergeSummary summary = store::merge(o.output, inputs, o.force);
  fmt::print(stderr, "gpuscope: merged {} run{} from {} file{} into {} ({} samples)\n",
             summary.runs, summary.runs == 1 ? "" : "s", summary.inputs.size(),
             summary.inputs.size() == 1 ? "" : "s", o.output, summary.rows.samples);
  return 0;
}

}  // namespace

Command add_merge_command(CLI::App& parent) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* app = parent.add_subcommand(
      "merge", "Combine per-rank run databases (files or directories) into one");
  app->add_option("output", o->output, "The merged database to write")
      ->required()
      ->type_name("OUT.db");
  app->add_option("inputs", o->inputs,
                  "Run databases, or directories of them; gssr data (docs/gssr.md)")
      ->required()
      ->type_name("INPUT...");
  app->add_flag("-f,--force-overwrite", o->force, "Replace an existing output file");
  return {app, [o] { return run_merge(*o); }};
}

}  // namespace gpuscope::cli
