#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "core/json_text.hpp"

namespace gpuscope::cli {
namespace {

int run_scenarios(bool json) {
  const auto scenarios = collect::shipped_scenarios();
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : scenarios) {
      out.push_back({{"name", s.name},
                     {"description", s.description},
                     {"gpus", s.gpu_count},
                     {"path", s.path.string()}});
    }
    fmt::print("{}\n", json_text(out, 2));
    return 0;
  }
  if (scenarios.empty()) {
    fmt::print(stderr, "gpuscope: no scenarios found in {}\n", collect::scenario_dir().string());
    return 1;
  }
  std::size_t width = 0;
  for (const auto& s : scenarios) width = std::max(width, s.name.size());
  for (const auto& s : scenarios) {
    fmt::print("{:<{}}  {}\n", s.name, width, s.description);
  }
  fmt::print(
      "\nUse one with --simulate NAME, e.g. 'gpuscope devices --simulate {}'. "
      "The format is in docs/scenarios.md.\n",
      scenarios.front().name);
  return 0;
}

}  // namespace

Command add_scenarios_command(CLI::App& parent) {
  auto json = std::make_shared<bool>(false);
  CLI::App* app = parent.add_subcommand(
      "scenarios", "List the shipped simulated-GPU scenarios usable with --simulate NAME");
  app->add_flag("--json", *json, "Print JSON");
  return {app, [json] { return run_scenarios(*json); }};
}

}  // namespace gpuscope::cli
