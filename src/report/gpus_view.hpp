// The GPUs one by one: the Per GPU table (activity against the median, energy, power, score;
// each MIG instance under its parent), gpus[] of --json and the load balance.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/analysis.hpp"
#include "report/view_text.hpp"

namespace gpuscope::report {

// "Per GPU": a row per GPU, the balance under it.
std::string gpus_text(const analyze::Analysis& a, const Style& style);
// gpus[] of --json: each GPU's identity, activity, energy, power, throttling and statistics.
nlohmann::json gpus_json(const analyze::Analysis& a);
// balance and mig_balance of --json: the spread of activity and the stragglers; null without.
nlohmann::json balance_json(const std::optional<analyze::Balance>& b);

}  // namespace gpuscope::report
