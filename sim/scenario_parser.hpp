// Turns a scenario file into a validated Scenario, or a message that says where and what is wrong.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "sim/scenario.hpp"

namespace gpuscope::sim {

// Limits that keep the parser's memory and stack bounded whatever the file (docs/scenarios.md).
inline constexpr std::size_t kMaxScenarioBytes = 4U << 20U;  // 4 MiB
inline constexpr std::size_t kMaxScenarioDepth = 64;         // nested arrays and objects

// Reads path and parses it. Errors read "scenario <path>: <JSON pointer>: <what is wrong>".
tl::expected<Scenario, std::string> load_scenario(const std::string& path);

// Parses text as if read from path (path names the scenario in errors and anchors state_file).
tl::expected<Scenario, std::string> parse_scenario(std::string_view text, const std::string& path);

}  // namespace gpuscope::sim
