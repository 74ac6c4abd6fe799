// What the site report (site_report.hpp) embeds, apart from the document around it: the data
// as one JSON object, and the nodes × time heatmap quantised to bytes. Shapes in docs/report.md,
// "The site report (gpuscope jobs -o)".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "report/site_report.hpp"

namespace gpuscope::report {

// The heatmap's cells as bytes: first nodes × bins utilization bytes, row by node (0..250 for
// 0..100 %, 255 for a blank cell: no job held a GPU of the node, or its utilization is unknown),
// then as many busy-share bytes (1..250 for a share up to 1, 0 for a blank cell). Throws Error
// when the arrays do not have nodes × bins cells.
std::vector<std::uint8_t> site_heatmap_bytes(const NodeHeatmap& heatmap);

// Everything else the page reads: the period, totals, series, tables, top jobs (each with its
// "command", job_command with its id), efficiency bands and the heatmap's axes. Numbers are
// rounded to 6 significant digits; absent figures are null. Throws Error for a series whose
// length is not the number of periods.
nlohmann::json site_report_json(const SiteReportData& data);

}  // namespace gpuscope::report
