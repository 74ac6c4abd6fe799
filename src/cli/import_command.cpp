// `gpuscope import`: gssr's profile folders and exported databases as a gpuscope run database.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "app/gssr_import.hpp"
#include "cli/command.hpp"
#include "core/output_file.hpp"

namespace gpuscope::cli {
namespace {

struct ImportOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool force = false;
};

int run_import(const ImportOptions& o) {
  OutputCheck check;
  check.force = o.force;
  for (const auto& input : o.inputs) check.inputs.emplace_back(input);
  const std::filesystem::path output = check_output_file(o.output, check);
  std::vector<std::filesystem::path> inputs(o.inputs.begin(), o.inputs.end());
  const app::GssrImport imported = app::import_gssr(inputs, output, o.force);
  for (const auto& note : imported.notes) fmt::print(stderr, "gpuscope: note: {}\n", note);
  fmt::print(stderr,
             "gpuscope: imported {} gssr process{} ({} GPU{}, {} samples) into {}; gssr recorded "
             "no power, energy, temperatures or clocks (docs/gssr.md)\n",
             imported.runs, imported.runs == 1 ? "" : "es", imported.gpus,
             imported.gpus == 1 ? "" : "s", imported.samples, output.string());
  return 0;
}

}  // namespace

Command add_import_command(CLI::App& parent) {
  auto o = std::make_shared<ImportOptions>();
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
  return {app, [o] { return run_import(*o); }};
}

}  // namespace gpuscope::cli
