// `gpuscope merge OUT.db INPUTS...`: one database from the per-rank files of a job.
#include <memory>

#include "app/inputs/import_run.hpp"
#include "cli/analysis_options.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_merge_command(CLI::App& parent) {
  auto o = std::make_shared<app::ImportRun>();
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
  add_read_options(*app, o->read);
  return {app, [o] { return app::run_merge(*o); }};
}

}  // namespace gpuscope::cli
