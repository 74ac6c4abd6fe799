// Finding the programs an integration test drives (Prometheus, VictoriaMetrics, promtool...) and
// waiting for what they do, generously: CI machines are loaded.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace gpuscope::testing {

// The program's path in $PATH, "" when it is not installed.
std::string find_program(const std::string& name);

// Polls `condition` every 100 ms until it holds or `limit` passes; its last answer.
bool eventually(const std::function<bool()>& condition,
                std::chrono::seconds limit = std::chrono::seconds(90));

}  // namespace gpuscope::testing
