#include "collect/backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/paths.hpp"
#include "util/environment.hpp"
#include "util/small_file.hpp"

namespace gpuscope::collect {
namespace {

constexpr const char* kSimLibraryName = "libgpuscope-sim-nvml.so";
constexpr const char* kSimDcgmLibraryName = "libgpuscope-sim-dcgm.so";

std::string shipped_names() {
  std::string names;
  for (const auto& scenario : shipped_scenarios()) {
    names += (names.empty() ? "" : ", ") + scenario.name;
  }
  return names.empty() ? "none found in " + scenario_dir().string() : names;
}

}  // namespace

std::filesystem::path scenario_dir() {
  if (auto dir = util::environment_or_empty("GPUSCOPE_SCENARIO_PATH"); !dir.empty()) return dir;
  return data_dir() / "scenarios";
}

std::filesystem::path use_simulated_scenario(const std::string& name_or_path) {
  const auto scenario = std::filesystem::absolute(resolve_scenario(name_or_path));
  setenv("GPUSCOPE_SIM_SCENARIO", scenario.c_str(), 1);
  return scenario;
}

std::string simulated_library(const char* variable, const char* file_name) {
  if (auto path = util::environment_or_empty(variable); !path.empty()) return path;
  return (private_library_dir() / file_name).string();
}

std::vector<ScenarioInfo> shipped_scenarios() {
  std::vector<ScenarioInfo> scenarios;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(scenario_dir(), error)) {
    if (entry.path().extension() != ".json") continue;
    ScenarioInfo info{entry.path().stem().string(), {}, entry.path(), 0};
    // A shipped file that does not parse still gets listed; loading it reports the parse error.
    // Read as the simulated driver reads it: a regular file of at most 4 MiB (a FIFO or a device
    // named *.json in GPUSCOPE_SCENARIO_PATH must not hang the listing).
    const auto text = util::read_small_file(entry.path(), std::size_t{4} << 20U);
    auto json =
        text ? nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false) : nlohmann::json();
    if (json.is_object()) {
      info.description = json.value("description", "");
      // "gpus" is a list, or {"count": N, "template": ...} (docs/scenarios.md).
      if (auto gpus = json.find("gpus"); gpus != json.end() && gpus->is_array()) {
        info.gpu_count = gpus->size();
      } else if (gpus != json.end() && gpus->is_object()) {
        info.gpu_count = gpus->value("count", std::size_t{0});
      }
      // AMD cards: each GCD a device ("gcds" lists them; else one).
      if (auto amd = json.find("amd_gpus"); amd != json.end() && amd->is_array()) {
        for (const auto& card : *amd) {
          const auto gcds = card.is_object() ? card.find("gcds") : card.end();
          info.gpu_count += gcds != card.end() && gcds->is_array() ? gcds->size() : 1;
        }
      }
    }
    scenarios.push_back(std::move(info));
  }
  std::sort(scenarios.begin(), scenarios.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return scenarios;
}

std::filesystem::path resolve_scenario(const std::string& name_or_path) {
  if (name_or_path.empty()) {
    throw Error::usage("--simulate needs a scenario", {},
                       fmt::format("shipped scenarios: {}", shipped_names()));
  }
  std::filesystem::path as_path(name_or_path);
  const bool looks_like_path =
      as_path.extension() == ".json" || name_or_path.find('/') != std::string::npos;
  if (std::filesystem::is_regular_file(as_path) && looks_like_path) return as_path;
  std::error_code error;
  if (looks_like_path && std::filesystem::exists(as_path, error)) {
    // A FIFO or a device would block or never end when the simulated driver reads it.
    throw Error::usage(fmt::format("scenario {} is not a regular file", name_or_path), {},
                       "give a path to a scenario JSON file");
  }
  if (looks_like_path) {
    throw Error::usage(fmt::format("scenario file {} does not exist", name_or_path), {},
                       fmt::format("give a path to a scenario JSON file or the name of a shipped "
                                   "scenario ({})",
                                   shipped_names()));
  }
  auto shipped = scenario_dir() / (name_or_path + ".json");
  if (std::filesystem::is_regular_file(shipped)) return shipped;
  throw Error::usage(
      fmt::format("unknown scenario '{}'", name_or_path), {},
      fmt::format("shipped scenarios: {} (or give a path to a scenario file)", shipped_names()));
}

std::shared_ptr<const nvml::Library> open_backend(const BackendOptions& options) {
  if (!options.simulate.empty()) {
    if (!options.nvml_library.empty()) {
      throw Error::usage("--simulate and --nvml-library cannot be combined", {},
                         "--simulate already chooses gpuscope's simulated-GPU library");
    }
    use_simulated_scenario(options.simulate);  // read by the simulated library at nvmlInit
    return nvml::Library::open(
        {simulated_library("GPUSCOPE_SIM_LIBRARY", kSimLibraryName), /*simulated=*/true});
  }
  std::string path = options.nvml_library;
  if (path.empty()) path = util::environment_or_empty("GPUSCOPE_NVML_LIBRARY");
  return nvml::Library::open({path, false});
}

std::shared_ptr<const dcgm::Library> open_dcgm_library(const BackendOptions& options) {
  if (!options.simulate.empty()) {
    return dcgm::Library::open(
        {simulated_library("GPUSCOPE_SIM_DCGM_LIBRARY", kSimDcgmLibraryName)});
  }
  std::string path = options.dcgm_library;
  if (path.empty()) path = util::environment_or_empty("GPUSCOPE_DCGM_LIBRARY");
  return dcgm::Library::open({path});
}

}  // namespace gpuscope::collect
