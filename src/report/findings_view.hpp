// The diagnosis that ends every text view (findings, then notes), and findings of --json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/analysis.hpp"
#include "report/view_text.hpp"

namespace gpuscope::report {

// "Diagnosis": each finding, then each note on what the analysis did.
std::string findings_text(const analyze::Analysis& a, const Style& style);
nlohmann::json findings_json(const analyze::Analysis& a);  // findings of --json: kind and text

}  // namespace gpuscope::report
