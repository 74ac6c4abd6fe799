// `gpuscope import`: gssr's profile folders and exported databases as a gpuscope run database.
#include <memory>

#include "app/import_run.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_import_command(CLI::App& parent) {
  auto o = std::make_shared<app::ImportRun>();
  CLI::App* app = parent.add_subcommand(
      "import",
      "Convert gssr's profile folders and exported databases into a gpuscope run database "
      "(analyze, report, merge and export also read them directly)");
  app->add_option("inputs", o->inputs,
                  "gssr profile folders (profile_out_JobID_<job>), process files "
                  "(*_proc_<p>.json) or exported SQLite (gssr analyze --export)")
      ->required()
      ->type_name("INPUT...");
  app->add_option("-o,--output", o->output, "The run database to write")
      ->required()
      ->type_name("OUT.db");
  app->add_flag("-f,--force-overwrite", o->force, "Replace an existing output file");
  return {app, [o] { return app::run_import(*o); }};
}

}  // namespace gpuscope::cli
