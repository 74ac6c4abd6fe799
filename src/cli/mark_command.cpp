// gpuscope mark: a phase's begin or end, or a point in time, from a shell script (docs/phases.md).
#include "app/profile/mark.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_mark_command(CLI::App& parent) {
  auto o = std::make_shared<app::MarkOptions>();
  CLI::App* app = parent.add_subcommand(
      "mark",
      "Mark a phase of the job being profiled: 'gpuscope mark begin NAME' ... 'gpuscope mark end "
      "NAME' (or 'point NAME'); never blocks, and does nothing outside gpuscope profile");
  app->add_option("kind", o->kind, "begin, end or point")->required()->type_name("KIND");
  app->add_option("name", o->name, "The phase's name, e.g. checkpoint")
      ->required()
      ->type_name("NAME");
  app->add_option("--instance", o->instance, "Which one, e.g. the step or epoch number")
      ->type_name("TEXT");
  app->add_option("--pid", o->pid,
                  "Whose phase it is (default: the process that runs gpuscope mark, e.g. the "
                  "shell)")
      ->type_name("PID");
  app->add_flag("--strict", o->strict, "Exit 1 when the mark was not delivered");
  app->add_flag("-q,--quiet", o->quiet, "Say nothing when the mark was not delivered");
  return {app, [o] { return app::run_mark(*o); }};
}

}  // namespace gpuscope::cli
