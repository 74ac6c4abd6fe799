// `gpuscope help`: with no option the program's help; --man DIR and --completion bash|zsh write
// the man pages and completions from this command line's own definitions (app/command_docs).
// Hidden from --help: the build runs it, users get its output installed.
#include <memory>

#include "app/help/command_docs.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_help_command(CLI::App& parent, const std::string& version) {
  auto o = std::make_shared<app::HelpOptions>();
  CLI::App* app = parent.add_subcommand("help",
                                        "Print the help, or write the man pages and "
                                        "shell completions");
  app->group("");  // hidden
  app->add_option("--man", o->man_dir, "Write one man page per command into DIR")->type_name("DIR");
  app->add_option("--completion", o->completion, "Print the completion script of SHELL")
      ->type_name("SHELL")
      ->check(CLI::IsMember({"bash", "zsh"}));
  app->add_option("--date", o->date,
                  "The man pages' date (default SOURCE_DATE_EPOCH's, else today)")
      ->type_name("YYYY-MM-DD");
  CLI::App* top = &parent;
  return {app, [o, top, version] {
            return app::run_help(
                docgen::describe(*top, app::completion_values()), *o, version,
                // the program's help, not this (selected) command's
                top->get_formatter()->make_help(top, top->get_name(), CLI::AppFormatMode::Normal));
          }};
}

}  // namespace gpuscope::cli
