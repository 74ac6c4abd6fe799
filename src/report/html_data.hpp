// The data the HTML report embeds: the analysis JSON (docs/analysis.md) with numbers rounded for
// display, plus what only the report needs: per-GPU series quantised to bytes, timeline marks,
// the metric catalog. Shape in docs/report.md.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "analyze/analysis.hpp"
#include "report/gpu_grid.hpp"

namespace gpuscope::report {

// What bounds the embedded data of a big run (docs/report.md, "Large runs").
struct HtmlDataLimits {
  GridLimits grid;
  std::size_t full_summary_gpus = 1024;  // more GPUs: their summaries keep the mean only
};

// The embedded data object (the report's JavaScript reads nothing else).
nlohmann::json html_report_data(const analyze::Analysis& analysis,
                                const HtmlDataLimits& limits = {});

// Rounds every floating-point number in `value` to `digits` significant digits, in place.
void round_numbers(nlohmann::json& value, int digits);

// Standard base64 (RFC 4648, with padding).
std::string base64(std::span<const std::uint8_t> bytes);

// `text` gzip-compressed (a gzip wrapper, which the browser's DecompressionStream("gzip") reads).
std::string gzip(std::string_view text);

// JSON text made safe inside a <script> element: every '<' becomes \u003c (only strings can
// hold one), so no "</script>" or "<!--" in the data can end or confuse the element.
std::string json_for_script(const nlohmann::json& value);

}  // namespace gpuscope::report
