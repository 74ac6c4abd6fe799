#include <memory>

#include "app/live/devices_run.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_devices_command(CLI::App& parent) {
  auto options = std::make_shared<app::DevicesOptions>();
  CLI::App* app = parent.add_subcommand(
      "devices",
      "List the GPUs (NVIDIA and AMD): identity, memory, power limits, clocks, supported metrics");
  add_backend_options(*app, options->backend);
  app->add_flag("--json", options->json, "Print JSON (shape documented in docs/cli.md)");
  app->add_option("--vendor", options->vendor,
                  "Which GPUs: all (default), nvidia (NVML) or amd (AMD SMI, else ROCm SMI)");
  return {app, [options] { return app::run_devices(*options); }};
}

}  // namespace gpuscope::cli
