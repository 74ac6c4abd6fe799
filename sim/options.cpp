#include "sim/options.hpp"

#include <cstdlib>
#include <string_view>

#include "sim/costs.hpp"

namespace gpuscope::sim {
namespace {

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string malformed(std::string_view name, const std::string& value, std::string_view want) {
  return std::string(name) + "=" + value + " is not " + std::string(want);
}

}  // namespace

tl::expected<DriverOptions, std::string> options_from_environment() {
  DriverOptions options;
  options.scenario_path = variable("GPUSCOPE_SIM_SCENARIO");
  options.state_path = variable("GPUSCOPE_SIM_STATE");
  if (const auto value = variable("GPUSCOPE_SIM_PRIVILEGED")) {
    if (*value != "0" && *value != "1") {
      return tl::make_unexpected(malformed("GPUSCOPE_SIM_PRIVILEGED", *value, "0 or 1"));
    }
    options.privileged = *value == "1";
  }
  if (const auto value = variable("GPUSCOPE_SIM_EPOCH_NS")) {
    char* end = nullptr;
    const long long epoch = std::strtoll(value->c_str(), &end, 10);
    if (*end != '\0' || epoch < 0) {
      return tl::make_unexpected(
          malformed("GPUSCOPE_SIM_EPOCH_NS", *value, "a CLOCK_REALTIME time in nanoseconds"));
    }
    options.epoch_ns = epoch;
  }
  if (const auto value = variable("GPUSCOPE_SIM_TIME_SCALE")) {
    char* end = nullptr;
    const double scale = std::strtod(value->c_str(), &end);
    if (*end != '\0' || !(scale > 0) || scale > 10000) {
      return tl::make_unexpected(
          malformed("GPUSCOPE_SIM_TIME_SCALE", *value, "a number in (0, 10000]"));
    }
    options.time_scale = scale;
  }
  if (auto value = variable("GPUSCOPE_SIM_DRIVER_COSTS")) {
    if (!driver_costs_named(*value)) {
      return tl::make_unexpected(
          malformed("GPUSCOPE_SIM_DRIVER_COSTS", *value,
                    "a cost table (none or h200), with its waits after a colon (h200:node)"));
    }
    options.driver_costs = std::move(value);
  }
  return options;
}

}  // namespace gpuscope::sim
