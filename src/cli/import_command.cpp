// `gpuscope import`: foreign data (gssr's folders and exports, nvidia-smi and DCGM logs) as a
// gpuscope run database.
#include <memory>

#include "app/inputs/import_run.hpp"
#include "cli/analysis_options.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_import_command(CLI::App& parent) {
  auto o = std::make_shared<app::ImportRun>();
  CLI::App* app = parent.add_subcommand(
      "import",
      "Convert foreign data (nvidia-smi and dcgmi logs, gssr's folders and exports) into a "
      "gpuscope run database "
      "(analyze, report, merge and export also read them directly)");
  app->add_option("inputs", o->inputs,
                  "nvidia-smi --query-gpu CSV, nvidia-smi dmon and dcgmi dmon logs (docs/logs.md); "
                  "gssr profile folders, process files or exported SQLite (docs/gssr.md)")
      ->required()
      ->type_name("INPUT...");
  app->add_option("-o,--output", o->output, "The run database to write")
      ->required()
      ->type_name("OUT.db");
  app->add_flag("-f,--force-overwrite", o->force, "Replace an existing output file");
  add_read_options(*app, o->read);
  return {app, [o] { return app::run_import(*o); }};
}

}  // namespace gpuscope::cli
