// Renders `gpuscope devices`: a readable listing for people and a documented JSON shape
// (docs/cli.md#devices) for scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/device_description.hpp"

namespace gpuscope::report {

std::string devices_text(const SystemDescription& system);
nlohmann::json devices_json(const SystemDescription& system);

}  // namespace gpuscope::report
