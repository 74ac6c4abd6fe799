// What the sections of analyze's text, JSON and CSV share (analysis_view.cpp puts the sections
// together; each section's file writes its own text, JSON and CSV).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "core/metrics.hpp"

namespace gpuscope::report {

// Terminal styling: bold headings, warnings in yellow, dim notes; plain text off a terminal.
struct Style {
  bool color;
  std::string bold(const std::string& s) const { return color ? "\033[1m" + s + "\033[0m" : s; }
  std::string warn(const std::string& s) const { return color ? "\033[33m" + s + "\033[0m" : s; }
  std::string dim(const std::string& s) const { return color ? "\033[2m" + s + "\033[0m" : s; }
};

// Whether the GPUs come from more than one host or rank (labels then name them).
bool several_hosts(const analyze::Analysis& a);
std::string pct(double fraction);    // "42 %"
std::string seconds_text(double s);  // "12.3 s", "4.5 min", "1.25 h"
// A table with left-aligned first column and right-aligned others, widths fitted to content.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, const Style& style);
// The unit values are shown in (bytes as GiB, rates as GB/s).
std::string unit_of(Metric m);

// A summary's figures as JSON: count, mean, median, p5, p95, min, max.
nlohmann::json summary_json(const analyze::Summary& s);
// The value, or null.
template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace gpuscope::report
