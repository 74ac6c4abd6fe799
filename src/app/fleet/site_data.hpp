// `gpuscope jobs -o site.html`: the site report's data (report/site_report.hpp) gathered from
// the accounting database's sums, or from the rows the server gave, then written.
#pragma once

#include <string>
#include <vector>

#include "app/fleet/fleet_read.hpp"
#include "report/site_report.hpp"
#include "store/accounting_db.hpp"

namespace gpuscope::app {

// The report's data from rows in memory (every job of the period, with their GPU rows).
report::SiteReportData site_data_of_rows(const std::vector<SiteJob>& jobs, const Period& period);

int write_site_report(const JobsRun& o, store::AccountingDb& db, const store::JobQuery& query,
                      const std::string& source);
int write_site_report(const JobsRun& o, const std::vector<SiteJob>& jobs, const Period& period,
                      const std::string& source);

}  // namespace gpuscope::app
