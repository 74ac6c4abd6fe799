// The sweep's plot, drawn for `gpuscope report` of a sweep database, never writes
// through a link planted in $TMPDIR or beside its file (PLplot opens files with fopen, which
// follows links); it is drawn in a private folder (util::TemporaryFolder, util::StagedFile). The
// sweep's own outputs beside its database replace a planted link instead of writing through it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "app/inputs/report_sweep.hpp"
#include "app/sweep/sweep_options.hpp"
#include "report/plots/sweep_plot.hpp"
#include "store/run_file.hpp"
#include "store/sweep_tables.hpp"
#include "support/planted_links.hpp"
#include "support/temp_dir.hpp"
#include "sweep/selection.hpp"

namespace gpuscope::app {
namespace {

namespace fs = std::filesystem;
using gpuscope::testing::leftovers;
using gpuscope::testing::PlantedLinks;
using gpuscope::testing::predictable_temporary_names;
using gpuscope::testing::TempDir;

// A power-limit sweep of two settings, two repeats each.
sweep::SweepRecord sweep_record() {
  sweep::SweepRecord r;
  r.command = {"./train"};
  r.gpus = {0};
  r.repeat = 2;
  r.plan = {{700, true}, {500, false}};
  int number = 0;
  for (const auto& setting : r.plan) {
    for (int repeat = 1; repeat <= 2; ++repeat) {
      sweep::Trial t;
      t.number = ++number;
      t.setting = setting.value;
      t.baseline = setting.baseline;
      t.repeat = repeat;
      t.status = sweep::TrialStatus::Ok;
      t.exit_code = 0;
      t.time_s = setting.baseline ? 10.0 + repeat : 11.5 + repeat;
      t.energy_j = setting.baseline ? 6000.0 + repeat : 5000.0 + repeat;
      t.energy_source = "counter";
      r.trials.push_back(t);
    }
  }
  r.summaries = sweep::summarize(r.plan, r.trials);
  return r;
}

// Points $TMPDIR at a folder of the test's for its lifetime.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::string& path) {
    const char* old = std::getenv("TMPDIR");
    had_ = old != nullptr;
    saved_ = had_ ? old : "";
    setenv("TMPDIR", path.c_str(), 1);
  }
  ~ScopedTmpdir() { had_ ? setenv("TMPDIR", saved_.c_str(), 1) : unsetenv("TMPDIR"); }
  ScopedTmpdir(const ScopedTmpdir&) = delete;
  ScopedTmpdir& operator=(const ScopedTmpdir&) = delete;

 private:
  bool had_ = false;
  std::string saved_;
};

TEST(SweepReport, PlantedLinksInTmpdirAreNeverFollowed) {
  TempDir dir;
  const std::string db = dir.file("sweep.db");
  store::create_empty_run_file(db);
  store::write_sweep_tables(db, sweep_record());
  fs::create_directory(dir.file("tmp"));
  // The old scheme's names: $TMPDIR/gpuscope-sweep-<pid>-<n>.png and its temporary beside it.
  std::vector<fs::path> names;
  for (int n = 1; n <= 2; ++n) {
    const fs::path png = dir.file("tmp/gpuscope-sweep-" + std::to_string(getpid()) + "-" +
                                  std::to_string(n) + ".png");
    names.push_back(png);
    for (auto& name : predictable_temporary_names(png)) names.push_back(std::move(name));
  }
  const PlantedLinks links(dir.file("victim"), names);
  const ScopedTmpdir tmpdir(dir.file("tmp"));

  analyze::Analysis analysis;
  analysis.inputs = {db};
  const auto sections = sweep_sections_html(analysis);

  EXPECT_TRUE(links.victim_untouched());
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_NE(sections[0].find("data:image/png;base64,iVBORw0KGgo"), std::string::npos)
      << "the section has its plot";
  EXPECT_EQ(leftovers(dir.file("tmp"), links, {}), std::vector<std::string>{});
}

TEST(SweepPlot, PlantedLinksBesideItsFileAreNeverFollowed) {
  TempDir dir;
  fs::create_directory(dir.file("shared"));
  const fs::path png = dir.file("shared/sweep.png");
  const PlantedLinks links(dir.file("victim"), predictable_temporary_names(png));
  report::plots::write_sweep_plot(sweep_record(), png);
  EXPECT_TRUE(links.victim_untouched());
  EXPECT_EQ(gpuscope::testing::read_file(png.string()).substr(1, 3), "PNG");
  EXPECT_EQ(leftovers(dir.file("shared"), links, {"sweep.png"}), std::vector<std::string>{});
}

// The sweep's CSV, JSON, plot and HTML go beside its database under names derived from -o, in a
// folder others may write: links planted there are replaced by the outputs, never written
// through, and none planted at a temporary name is touched.
TEST(SweepOutputs, LinksPlantedAtTheirNamesAreReplacedNeverFollowed) {
  TempDir dir;
  fs::create_directory(dir.file("shared"));
  std::vector<fs::path> temporaries;
  const std::vector<std::string> outputs = {"sweep.csv", "sweep.json", "sweep.png", "sweep.html"};
  for (const auto& name : outputs) {
    for (auto& t : predictable_temporary_names(dir.file("shared/" + name))) {
      temporaries.push_back(std::move(t));
    }
  }
  const PlantedLinks links(dir.file("victim"), temporaries);
  for (const auto& name : outputs)
    fs::create_symlink(dir.file("victim"), dir.file("shared/" + name));

  const SweepOutputs written =
      write_sweep_outputs(sweep_record(), dir.file("shared/sweep.db"), false, true);
  EXPECT_TRUE(written.failures.empty()) << written.failures.front();
  EXPECT_EQ(written.written.size(), 4u);
  EXPECT_TRUE(links.victim_untouched());
  for (const auto& name : outputs) {
    const fs::path path = dir.file("shared/" + name);
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path))) << path << " is still the link";
  }
  EXPECT_NE(gpuscope::testing::read_file(dir.file("shared/sweep.json")).find("\"trials\""),
            std::string::npos);
  EXPECT_EQ(leftovers(dir.file("shared"), links, outputs), std::vector<std::string>{});
}

}  // namespace
}  // namespace gpuscope::app
