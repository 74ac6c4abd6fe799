// read_dcgm_diag (guard/node_check.hpp): `dcgmi diag -j` of DCGM 3 and DCGM 4, walked by shape
// rather than read into one fixed structure, since the two differ (docs/guard.md cites both).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "guard/node_check.hpp"
#include "guard/notice_text.hpp"

namespace gpuscope::guard {
namespace {

using nlohmann::json;

constexpr const char* kDiagHint =
    "run `dcgmi diag -r 1 -j` by hand to see what DCGM says; check that nv-hostengine runs";

std::string status_word(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string diag_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return {};
}

// The GPU a result is of: DCGM 3's gpu_ids ("0", or "0,1,2" for the deployment tests), DCGM
// 4's entity_id of entity_group GPU.
std::string result_gpu(const json& r) {
  if (r.contains("gpu_ids")) {
    const std::string ids = diag_text(r["gpu_ids"]);
    return ids.find(',') != std::string::npos ? fmt::format("GPUs {}", ids) : "GPU " + ids;
  }
  if (r.contains("entity_id")) {
    const std::string group = r.contains("entity_group") ? diag_text(r["entity_group"]) : "GPU";
    return fmt::format("{} {}", group.empty() ? "GPU" : group, diag_text(r["entity_id"]));
  }
  return {};
}

// The first warning's words: a text (DCGM 3) or {"warning": text, "error_id": n} (DCGM 4).
std::string first_warning(const json& r) {
  if (!r.contains("warnings") || !r["warnings"].is_array()) return {};
  for (const auto& w : r["warnings"]) {
    if (w.is_string()) return w.get<std::string>();
    if (w.is_object() && w.contains("warning")) return diag_text(w["warning"]);
  }
  return {};
}

void read_test(const json& test, DiagRead& read) {
  if (!test.is_object() || !test.contains("results") || !test["results"].is_array()) return;
  const std::string name = test.contains("name") ? diag_text(test["name"]) : "a test";
  for (const auto& r : test["results"]) {
    if (!r.is_object() || !r.contains("status")) continue;
    ++read.results;
    const std::string status = status_word(diag_text(r["status"]));
    const bool failed = status == "fail" || status == "failed";
    if (!failed && status != "warn" && status != "warning") continue;
    const std::string why = first_warning(r);
    read.findings.push_back(
        {failed ? Severity::Failure : Severity::Warning, result_gpu(r),
         clean_value(fmt::format("DCGM diagnostic {} {}{}", name, failed ? "failed" : "warned",
                                 why.empty() ? "" : ": " + why))});
  }
}

const json* diagnostic_of(const json& doc) {
  for (const char* key : {"DCGM Diagnostic", "DCGM GPU Diagnostic"}) {
    if (doc.contains(key) && doc[key].is_object()) return &doc[key];
  }
  return nullptr;
}

}  // namespace

DiagRead read_dcgm_diag(std::string_view text) {
  const std::size_t start = text.find('{');  // dcgmi may print a line before the JSON
  const json doc =
      start == std::string_view::npos ? json() : json::parse(text.substr(start), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    throw Error("dcgmi diag printed no JSON document",
                clean_value(std::string(text.substr(0, 200))), kDiagHint);
  }
  const json* diag = diagnostic_of(doc);
  if (diag == nullptr) {
    throw Error(
        "dcgmi diag's JSON holds no \"DCGM Diagnostic\" (DCGM 4) or \"DCGM GPU "
        "Diagnostic\" (DCGM 3)",
        {}, kDiagHint);
  }
  for (const json* where : {&doc, diag}) {
    if (where->contains("runtime_error")) {
      throw Error("DCGM's diagnostic could not run",
                  clean_value(diag_text((*where)["runtime_error"])), kDiagHint);
    }
  }
  DiagRead read;
  if (diag->contains("version")) read.version = diag_text((*diag)["version"]);
  if (doc.contains("metadata") && doc["metadata"].is_object() &&
      doc["metadata"].contains("version"))
    read.version = diag_text(doc["metadata"]["version"]);
  if (diag->contains("test_categories") && (*diag)["test_categories"].is_array()) {
    for (const auto& category : (*diag)["test_categories"]) {
      if (!category.is_object() || !category.contains("tests")) continue;
      for (const auto& test : category["tests"]) read_test(test, read);
    }
  }
  if (read.results == 0) {
    throw Error("dcgmi diag gave no test result", "its JSON lists no test with a status",
                kDiagHint);
  }
  return read;
}

}  // namespace gpuscope::guard
