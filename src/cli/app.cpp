#include "cli/app.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::cli {
namespace {

std::string version_text() {
  std::string text = fmt::format("gpuscope {}", kVersion);
  if (*kGitRevision != '\0') text += fmt::format(" ({})", kGitRevision);
  return text;
}

// One line whatever the message quotes (a server's words, a file's line, a label value): its
// control bytes shown, never acted on by the terminal, and no newline forging a line of ours.
void print_error(const std::string& message) {
  fmt::print(stderr, "gpuscope: error: {}\n", util::visible(message));
}

// gssr spells two analyze flags with one dash and three letters (-pts, -plb), which CLI11 would
// read as three one-letter flags; rewrite them to their long names (up to a "--").
std::vector<std::string> gssr_spellings(std::vector<std::string> args) {
  if (args.size() < 2 || args[1] != "analyze") return args;
  for (std::size_t i = 2; i < args.size() && args[i] != "--"; ++i) {
    if (args[i] == "-pts") args[i] = "--plot-time-series";
    if (args[i] == "-plb") args[i] = "--plot-load-balancing";
  }
  return args;
}

// slurm.conf's MailProg takes no arguments: a link named gpuscope-mail is `gpuscope mail`.
std::vector<std::string> command_of_name(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  const std::string_view name = args.empty() ? "" : std::string_view(args[0]);
  if (name.substr(name.find_last_of('/') + 1) == "gpuscope-mail") {
    args.insert(args.begin() + 1, "mail");
  }
  return args;
}

}  // namespace

void add_backend_options(CLI::App& app, collect::BackendOptions& options) {
  app.add_option("--simulate", options.simulate,
                 "Use simulated GPUs from SCENARIO (a shipped name such as h100, or a JSON file); "
                 "see 'gpuscope scenarios'")
      ->type_name("SCENARIO");
  app.add_option("--nvml-library", options.nvml_library,
                 "Load NVML from PATH instead of the system's libnvidia-ml.so.1 "
                 "(also env GPUSCOPE_NVML_LIBRARY)")
      ->type_name("PATH");
  app.add_option("--metrics-source", options.metrics_source,
                 "Where saturation metrics come from: auto (GPM on Hopper and newer, DCGM where "
                 "GPM is missing), gpm, or dcgm (docs/sources.md)")
      ->type_name("SOURCE")
      ->check(CLI::IsMember({"auto", "gpm", "dcgm"}));
  app.add_option("--dcgm", options.dcgm,
                 "How to reach DCGM: auto (the nv-hostengine at localhost:5555, else embedded), "
                 "embedded, hostengine, or an nv-hostengine's HOST:PORT or unix:PATH")
      ->type_name("HOW");
  app.add_option("--dcgm-library", options.dcgm_library,
                 "Load DCGM from PATH instead of the system's libdcgm.so.4 (also env "
                 "GPUSCOPE_DCGM_LIBRARY)")
      ->type_name("PATH");
}

int run(int argc, char** argv) {
  CLI::App app(
      "gpuscope: how well your job used its GPUs, what it cost in energy and carbon, "
      "and how to make it cheaper.",
      "gpuscope");
  app.set_version_flag("-V,--version", version_text(), "Print the version and exit");
  app.require_subcommand(1);
  app.footer(
      "Run 'gpuscope COMMAND --help' for a command's options. Documentation: README.md, docs/.");

  std::vector<Command> commands;
  commands.push_back(add_profile_command(app));
  commands.push_back(add_analyze_command(app));
  commands.push_back(add_report_command(app));
  commands.push_back(add_job_command(app));
  commands.push_back(add_jobs_command(app));
  commands.push_back(add_usage_command(app));
  commands.push_back(add_mail_command(app));
  commands.push_back(add_guard_command(app));
  commands.push_back(add_health_check_command(app));
  commands.push_back(add_merge_command(app));
  commands.push_back(add_import_command(app));
  commands.push_back(add_devices_command(app));
  commands.push_back(add_scenarios_command(app));
  commands.push_back(add_monitor_command(app));
  commands.push_back(add_serve_command(app));
  commands.push_back(add_sweep_command(app));
  commands.push_back(add_kernels_command(app));
  commands.push_back(add_export_command(app));
  commands.push_back(add_mark_command(app));
  commands.push_back(add_help_command(app, fmt::format("gpuscope {}", kVersion)));

  std::vector<std::string> args = gssr_spellings(command_of_name(argc, argv));
  // CLI11 would call an unknown command a stray argument; name it for what it is.
  if (args.size() > 1 && !args[1].starts_with("-")) {
    const std::string first = args[1];
    bool known = false;
    std::string names;
    for (const Command& command : commands) {
      known |= command.app->get_name() == first;
      if (command.app->get_group().empty()) continue;  // hidden (help)
      names += (names.empty() ? "" : ", ") + command.app->get_name();
    }
    if (!known) {
      print_error(
          fmt::format("unknown command '{}'; the commands are {} (gpuscope --help)", first, names));
      return 2;
    }
  }

  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(arg.data());
  try {
    app.parse(static_cast<int>(pointers.size()), pointers.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::string where = "gpuscope";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    print_error(fmt::format("{}; run '{} --help' for usage", e.what(), where));
    return 2;
  }

  try {
    for (const Command& command : commands) {
      if (command.app->parsed()) return command.run();
    }
    print_error("no command given; run 'gpuscope --help'");
    return 2;
  } catch (const Error& e) {
    print_error(e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    // Anything else is a bug in gpuscope: say so instead of pretending it is the user's fault.
    print_error(
        fmt::format("internal error: {}; please report it with the command you ran", e.what()));
    return 1;
  }
}

}  // namespace gpuscope::cli
