// `gpuscope jobs` and `gpuscope usage` as text, JSON and CSV: the site's job rows with their
// totals line, and the sums per group (docs/fleet.md has the shapes).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "core/site_job.hpp"

namespace gpuscope::report {

// What the tables say about where the rows came from.
struct SiteTableContext {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  std::string source;        // "the accounting database FILE", "Prometheus at URL"
  std::int64_t matched = 0;  // jobs matching, before a limit cut the rows shown
  std::string by;            // usage: "user", "account", ...
};

// One job as JSON (with its GPUs when it has GPU rows).
nlohmann::json site_job_json(const SiteJob& job);

// The rows as a terminal table, the most idle GPU-hours first as given, with a totals line
// (over every matching job: `total`) and what was left out.
std::string jobs_text(std::span<const SiteJob> jobs, const UsageRow& total,
                      const SiteTableContext& context);
// {"from", "to", "source", "matched", "jobs": [...], "total": {...}}
nlohmann::json jobs_json(std::span<const SiteJob> jobs, const UsageRow& total,
                         const SiteTableContext& context);
// A header line, then one line per job (no GPU rows).
std::string jobs_csv(std::span<const SiteJob> jobs);

nlohmann::json usage_row_json(const UsageRow& row);
std::string usage_text(std::span<const UsageRow> rows, const UsageRow& total,
                       const SiteTableContext& context);
nlohmann::json usage_json(std::span<const UsageRow> rows, const UsageRow& total,
                          const SiteTableContext& context);
std::string usage_csv(std::span<const UsageRow> rows, const std::string& by);

// JSON text that never throws on bytes that are not UTF-8 (a job's name): they are replaced.
std::string dump_json(const nlohmann::json& value);

}  // namespace gpuscope::report
