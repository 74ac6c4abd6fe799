// Writes two site reports for the browser test (tests/integration/site_report_browser_test.mjs):
// a small site whose figures the test knows, hostile names included, and a year of a
// 2,000-node site (365 daily bins, 100 top jobs, 50 users) to measure. Prints each file's size
// and the time it took to build.
// Usage: site_report_fixture SMALL.html BIG.html
#include <chrono>
#include <fstream>
#include <iostream>

#include "report/site_report.hpp"
#include "synthetic_site.hpp"

namespace {

bool write(const char* path, const gpuscope::report::SiteReportData& data) {
  const auto began = std::chrono::steady_clock::now();
  const std::string html = gpuscope::report::site_report_html(data);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - began)
                      .count();
  std::ofstream out(path, std::ios::binary);
  out << html;
  std::cout << path << ": " << html.size() << " bytes, built in " << ms << " ms\n";
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuscope::report;
  if (argc != 3) {
    std::cerr << "usage: site_report_fixture SMALL.html BIG.html\n";
    return 2;
  }
  const bool small = write(argv[1], testing::small_site());
  const bool big = write(argv[2], testing::big_site());
  return small && big ? 0 : 1;
}
