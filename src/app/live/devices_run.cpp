#include "app/live/devices_run.hpp"

#include <fmt/format.h>

#include "collect/node_gpus.hpp"
#include "core/json_text.hpp"
#include "report/devices_view.hpp"

namespace gpuscope::app {

SystemDescription describe_devices(const DevicesOptions& options) {
  return collect::describe_node(options.backend, options.vendor);
}

int run_devices(const DevicesOptions& options) {
  const SystemDescription system = describe_devices(options);
  if (options.json) {
    fmt::print("{}\n", json_text(report::devices_json(system), 2));
  } else {
    fmt::print("{}", report::devices_text(system));
  }
  return 0;
}

}  // namespace gpuscope::app
