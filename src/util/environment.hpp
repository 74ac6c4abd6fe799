// Environment lookup as a value: code that reads the environment takes an EnvLookup, so tests
// hand it a map instead of changing the process's environment.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace gpuscope::util {

// The value of an environment variable, nullopt when it is not set (set to "" is "").
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Looks names up in this process's environment.
EnvLookup process_environment();

// The variable's value in this process's environment, "" when it is not set.
std::string environment_or_empty(const std::string& name);

}  // namespace gpuscope::util
