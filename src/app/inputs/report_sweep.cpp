#include "app/inputs/report_sweep.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "core/error.hpp"
#include "report/plots/sweep_plot.hpp"
#include "report/sweep_section.hpp"
#include "store/sweep_tables.hpp"
#include "sweep/selection.hpp"
#include "util/temporary_folder.hpp"

namespace gpuscope::app {
namespace {

namespace fs = std::filesystem;

// The sweep's plot as PNG bytes, drawn through a file (PLplot writes files) in a private folder
// (mkdtemp under $TMPDIR: PLplot's fopen follows links, so never a name anyone could plant);
// empty, with a note, when it cannot be drawn.
std::vector<std::uint8_t> plot_png(const sweep::SweepRecord& record) {
  std::vector<std::uint8_t> bytes;
  try {
    const util::TemporaryFolder folder("gpuscope-sweep-");
    const fs::path png = folder.path() / "sweep.png";
    report::plots::write_sweep_plot(record, png);
    std::ifstream in(png, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const Error& e) {
    fmt::print(stderr, "gpuscope: the sweep's plot was not drawn: {}\n", e.what());
  } catch (const std::system_error& e) {
    fmt::print(stderr,
               "gpuscope: the sweep's plot was not drawn: {}; set TMPDIR to a writable folder\n",
               e.what());
  }
  return bytes;
}

}  // namespace

std::vector<std::string> sweep_sections_html(const analyze::Analysis& analysis) {
  std::vector<std::string> sections;
  for (const auto& input : analysis.inputs) {
    auto record = store::read_sweep_tables(input);
    if (!record) continue;
    // The summaries are the sweep's own computation over the stored trials (and their outlier
    // flags), so they are what the sweep printed.
    record->summaries = sweep::summarize(record->plan, record->trials);
    const std::size_t n = sections.size() + 1;
    sections.push_back(report::sweep_section_html(*record, plot_png(*record),
                                                  n == 1 ? "sweep" : fmt::format("sweep-{}", n)));
  }
  return sections;
}

}  // namespace gpuscope::app
