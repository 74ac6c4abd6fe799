// Writes the HTML report of a run too big for the report to show every GPU at full detail, for
// the browser test of paging and binning (tests/integration/report_big_browser_test.mjs): 600
// GPUs (75 hosts × 8, ranks 0–74) over 2 minutes, the last GPU a straggler, with limits small
// enough to bin it (64 heatmap rows, 64 GPUs' worth of per-GPU bins, means only past 64 GPUs), so
// the test is quick where a real 10,000-GPU report takes half a minute to build.
// Usage: big_report_fixture OUTPUT.html
#include <fstream>
#include <iostream>

#include "report/html_report.hpp"
#include "synthetic_analysis.hpp"

int main(int argc, char** argv) {
  using namespace gpuscope;
  if (argc != 2) {
    std::cerr << "usage: big_report_fixture OUTPUT.html\n";
    return 2;
  }
  const analyze::Analysis a = report::testing::synthetic_analysis(600, 120, 8);
  report::HtmlReportOptions options;
  options.title = "600 GPUs, binned";
  options.generator = "big_report_fixture";
  options.limits.grid = {64, 64 * a.gpu_grid_bins};
  options.limits.full_summary_gpus = 64;
  std::ofstream out(argv[1], std::ios::binary);
  out << report::html_report(a, options);
  return out ? 0 : 1;
}
