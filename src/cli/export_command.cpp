// `gpuscope export --perfetto trace.json INPUT...`: run databases as Chrome trace-event JSON for
// ui.perfetto.dev (docs/export.md). The work is app::run_export.
#include <memory>

#include "app/inputs/export_run.hpp"
#include "cli/analysis_options.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_export_command(CLI::App& parent) {
  auto o = std::make_shared<app::ExportRun>();
  CLI::App* app = parent.add_subcommand(
      "export", "Write run databases as a Chrome/Perfetto trace (JSON) for ui.perfetto.dev");
  app->add_option("--perfetto", o->perfetto,
                  "The trace-event JSON file to write: per-GPU counter tracks, kernels and "
                  "memcpy/memset as slices, events as instants")
      ->type_name("FILE");
  app->add_option(
         "inputs", o->inputs,
         "Run databases (or directories of them); merged ones too; gssr data (docs/gssr.md)")
      ->required()
      ->type_name("INPUT...");
  app->add_option("--metrics", o->metrics,
                  "Only these metrics' counter tracks (default: every metric with data)")
      ->delimiter(',')
      ->type_name("NAME,...");
  app->add_flag("--no-kernels", o->no_kernels, "Leave out the kernel and memcpy/memset slices");
  app->add_flag("-f,--force-overwrite,--force", o->force, "Overwrite the output file");
  add_read_options(*app, o->read);
  return {app, [o] { return app::run_export(*o); }};
}

}  // namespace gpuscope::cli
