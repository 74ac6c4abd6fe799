// The options `gpuscope jobs` and `gpuscope usage` share: the period, who, where from, CO2.
#pragma once

#include <CLI/CLI.hpp>

#include "app/fleet/fleet_run.hpp"

namespace gpuscope::cli {

void add_fleet_options(CLI::App& app, app::FleetOptions& options);

}  // namespace gpuscope::cli
