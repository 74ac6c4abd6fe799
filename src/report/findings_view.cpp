#include "report/findings_view.hpp"

namespace gpuscope::report {

using analyze::Analysis;
using nlohmann::json;

std::string findings_text(const Analysis& a, const Style& style) {
  std::string out = "\n" + style.bold("Diagnosis") + "\n";
  if (a.findings.empty()) out += "  nothing stands out\n";
  for (const auto& f : a.findings) out += "  " + style.warn("•") + " " + f.text + "\n";
  for (const auto& n : a.notes) out += "  " + style.dim("note: " + n) + "\n";
  return out;
}

json findings_json(const Analysis& a) {
  json findings = json::array();
  for (const auto& f : a.findings) findings.push_back({{"kind", f.kind}, {"text", f.text}});
  return findings;
}

}  // namespace gpuscope::report
