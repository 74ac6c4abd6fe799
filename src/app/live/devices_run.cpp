#include "app/live/devices_run.hpp"

#include <fmt/format.h>

#include <optional>

#include "collect/amd_describe.hpp"
#include "collect/describe.hpp"
#include "collect/gpu_selection.hpp"
#include "collect/saturation.hpp"
#include "core/json_text.hpp"
#include "nvml/library.hpp"
#include "report/devices_view.hpp"

namespace gpuscope::app {
namespace {

SystemDescription describe_nvidia(const collect::BackendOptions& backend) {
  auto library = collect::open_backend(backend);
  nvml::Session session(library);
  SystemDescription system = collect::describe_system(session);
  if (library->simulated()) system.scenario = backend.simulate;
  std::vector<std::string> notes;
  collect::describe_saturation(system.devices, backend, notes);
  collect::describe_health(system.devices, session);
  return system;
}

}  // namespace

SystemDescription describe_devices(const DevicesOptions& options) {
  if (options.vendor != "all" && options.vendor != "nvidia" && options.vendor != "amd") {
    throw Error::usage(fmt::format("--vendor {} is not a GPU vendor", options.vendor), {},
                       "use all, nvidia or amd");
  }
  SystemDescription system;
  system.nvidia = false;
  std::optional<Error> nvidia_error;
  if (options.vendor != "amd") {
    try {
      system = describe_nvidia(options.backend);
    } catch (const Error& error) {
      nvidia_error = error;
    }
  }
  std::optional<Error> amd_error;
  if (options.vendor != "nvidia") {
    try {
      const auto session = collect::open_amd(options.backend);
      system.amd = collect::describe_amd(*session,
                                         static_cast<unsigned>(collect::gpu_count(system.devices)));
      if (!options.backend.simulate.empty()) system.scenario = options.backend.simulate;
    } catch (const Error& error) {
      amd_error = error;
    }
  }
  if (options.vendor == "nvidia" && nvidia_error) throw *nvidia_error;
  if (options.vendor == "amd" && amd_error) throw *amd_error;
  // A scenario or node with AMD GPUs only: the NVIDIA part says nothing.
  if (system.amd && system.devices.empty()) system.nvidia = false;
  const bool nvidia_listed = !nvidia_error && !system.devices.empty();
  if (nvidia_listed || system.amd) {
    // One vendor listed: the other's failure is said beside it, unless it is "none here".
    if (nvidia_listed && amd_error && !collect::amd_absent(*amd_error)) {
      system.notes.push_back(fmt::format("AMD GPUs not listed: {}", amd_error->what()));
    }
    if (system.amd && nvidia_error && !nvml::is_no_driver(*nvidia_error)) {
      system.notes.push_back(fmt::format("NVIDIA GPUs not listed: {}", nvidia_error->what()));
    }
    return system;
  }
  // No GPU of either vendor: an AMD problem other than "none here" is the one worth showing.
  if (amd_error && !collect::amd_absent(*amd_error)) throw *amd_error;
  if (nvidia_error) throw *nvidia_error;
  return system;  // NVML without GPUs, listed as such
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
