#include <fmt/format.h>

#include <memory>

#include "cli/command.hpp"
#include "collect/describe.hpp"
#include "collect/saturation.hpp"
#include "core/json_text.hpp"
#include "report/devices_view.hpp"

namespace gpuscope::cli {
namespace {

struct DevicesOptions {
  collect::BackendOptions backend;
  bool json = false;
};

int run_devices(const DevicesOptions& options) {
  auto library = collect::open_backend(options.backend);
  nvml::Session session(library);
  SystemDescription system = collect::describe_system(session);
  if (library->simulated()) system.scenario = options.backend.simulate;
  std::vector<std::string> notes;
  collect::describe_saturation(system.devices, options.backend, notes);
  collect::describe_health(system.devices, session);
  if (options.json) {
    fmt::print("{}\n", json_text(report::devices_json(system), 2));
  } else {
    fmt::print("{}", report::devices_text(system));
  }
  return 0;
}

}  // namespace

Command add_devices_command(CLI::App& parent) {
  auto options = std::make_shared<DevicesOptions>();
  CLI::App* app = parent.add_subcommand(
      "devices", "List the GPUs: identity, memory, power limits, clocks, supported metrics");
  add_backend_options(*app, options->backend);
  app->add_flag("--json", options->json, "Print JSON (shape documented in docs/cli.md)");
  return {app, [options] { return run_devices(*options); }};
}

}  // namespace gpuscope::cli
