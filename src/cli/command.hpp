// How subcommands plug into the command line: each adds itself to the CLI11 app and returns
// what to run when the user chose it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "collect/backend.hpp"

namespace gpuscope::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;  // returns the process exit code
};

// --simulate and --nvml-library, shared by every subcommand that talks to GPUs.
void add_backend_options(CLI::App& app, collect::BackendOptions& options);

Command add_profile_command(CLI::App& parent);
Command add_merge_command(CLI::App& parent);
Command add_import_command(CLI::App& parent);
Command add_analyze_command(CLI::App& parent);
Command add_report_command(CLI::App& parent);
Command add_devices_command(CLI::App& parent);
Command add_scenarios_command(CLI::App& parent);
Command add_monitor_command(CLI::App& parent);
Command add_serve_command(CLI::App& parent);
Command add_sweep_command(CLI::App& parent);
Command add_kernels_command(CLI::App& parent);
Command add_export_command(CLI::App& parent);
Command add_mark_command(CLI::App& parent);
Command add_job_command(CLI::App& parent);
Command add_jobs_command(CLI::App& parent);
Command add_usage_command(CLI::App& parent);
Command add_mail_command(CLI::App& parent);
Command add_guard_command(CLI::App& parent);
Command add_health_check_command(CLI::App& parent);
// Hidden: the man pages and completions (`version` as the pages print it).
Command add_help_command(CLI::App& parent, const std::string& version);

}  // namespace gpuscope::cli
