// libFuzzer target: the simulated driver's scenario parser (sim/scenario_parser.hpp) on any text,
// the way `--simulate FILE` reads a user's file. Whatever the text, the parser returns a scenario
// or a message: never a crash, a hang, unbounded memory or deep recursion.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/scenario_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // state_file paths in the text resolve against this folder; the parser never opens them.
  auto scenario = gpuscope::sim::parse_scenario(text, "/nonexistent/fuzz/scenario.json");
  if (!scenario && scenario.error().empty()) __builtin_trap();  // every refusal says why
  return 0;
}
