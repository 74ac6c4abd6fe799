// The static plots through the command line: `gpuscope report --format png|svg|pdf` and
// `gpuscope analyze -pts -plb`, on runs profiled from the simulated scenarios.
#include <gtest/gtest.h>

#include <filesystem>

#include "plots/image_check.hpp"
#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

namespace fs = std::filesystem;

class PlotsCli : public ::testing::Test {
 protected:
  TempDir dir_;
  std::map<std::string, std::string> env_{{"GPUSCOPE_SIM_STATE", dir_.file("state.json")},
                                          {"GPUSCOPE_SIM_TIME_SCALE", "10"},
                                          {"CUDA_VISIBLE_DEVICES", "\x01"},
                                          {"SLURM_JOB_ID", "\x01"}};

  std::string profile(const std::string& scenario, const std::string& name) {
    const std::string db = dir_.file(name + ".db");
    auto r = run_gpuscope(
        {"profile", "--simulate", scenario, "-q", "-s", "50", "-o", db, "--", "sleep", "1.5"},
        env_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return db;
  }

  static void expect_png(const std::string& path, std::uint32_t width, std::uint32_t height) {
    const auto png = png_decode(path);
    ASSERT_TRUE(png) << path << " is not a PNG";
    EXPECT_EQ(png->width, width) << path;
    EXPECT_EQ(png->height, height) << path;
    EXPECT_GT(png->distinct_colours, 8U) << path << " looks blank";
    EXPECT_GT(png->non_background_fraction, 0.02) << path << " looks blank";
  }
};

TEST_F(PlotsCli, ReportWritesTheFourPngPlotsNamedAfterThePrefix) {
  const auto db = profile("h100x4-straggler", "run");
  const std::string prefix = dir_.file("plots/run");
  fs::create_directories(dir_.file("plots"));
  // The extension of the format is dropped from the prefix; the format comes from it.
  auto r = run_gpuscope({"report", db, "-o", prefix + ".png"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* plot : {"-timeseries", "-load-balance", "-heatmap", "-overview"}) {
    expect_png(prefix + plot + ".png", 1600, 1000);
    EXPECT_NE(r.err.find(prefix + plot + ".png"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(prefix + ".png"));
  EXPECT_FALSE(fs::exists(prefix + ".png.tmp"));
}

TEST_F(PlotsCli, ReportRefusesToOverwriteWithoutForce) {
  const auto db = profile("h100", "run");
  const std::string prefix = dir_.file("p");
  ASSERT_EQ(run_gpuscope({"report", db, "--format", "png", "-o", prefix}).exit_code, 0);
  const auto before = fs::last_write_time(prefix + "-heatmap.png");
  auto again = run_gpuscope({"report", db, "--format", "png", "-o", prefix});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("p-timeseries.png exists"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("-f/--force-overwrite"), std::string::npos) << again.err;
  EXPECT_EQ(fs::last_write_time(prefix + "-heatmap.png"), before);
  auto forced = run_gpuscope({"report", db, "--format", "png", "-o", prefix, "-f", "--size",
                              "800x500", "--heatmap-metric", "power_w"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  expect_png(prefix + "-heatmap.png", 800, 500);
}

TEST_F(PlotsCli, ReportPdfIsOneDocumentAndSvgSaysWhatIsNotSupported) {
  // The A100 has no GPM: the SM-activity panels say so instead of drawing zero.
  const auto db = profile("a100-nogpm", "a100");
  auto pdf = run_gpuscope({"report", db, "-o", dir_.file("all.pdf")});
  ASSERT_EQ(pdf.exit_code, 0) << pdf.err;
  const std::string document = read_file(dir_.file("all.pdf"));
  EXPECT_EQ(document.rfind("%PDF", 0), 0U);
  EXPECT_FALSE(fs::exists(dir_.file("all-timeseries.pdf")));

  auto svg = run_gpuscope(
      {"report", db, "--format", "svg", "--size", "1200x800", "-o", dir_.file("a100")});
  ASSERT_EQ(svg.exit_code, 0) << svg.err;
  const std::string text = read_file(dir_.file("a100-timeseries.svg"));
  const auto root = svg_root(text);
  ASSERT_TRUE(root);
  EXPECT_NE(root->view_box.find("1200"), std::string::npos) << root->view_box;
  EXPECT_NE(text.find("not supported"), std::string::npos);
}

TEST_F(PlotsCli, AnalyzeDrawsGssrsTwoPlotsBesideTheInput) {
  const auto db = profile("h100x4-straggler", "train");
  auto r = run_gpuscope({"analyze", db, "-pts", "-plb", "--no-color"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("straggler"), std::string::npos) << r.out;  // the analysis is printed too
  expect_png(dir_.file("train-timeseries.png"), 1600, 1000);
  expect_png(dir_.file("train-load-balance.png"), 1600, 1000);
  EXPECT_FALSE(fs::exists(dir_.file("train-heatmap.png")));
  EXPECT_FALSE(fs::exists(dir_.file("train-overview.png")));

  // Long names, another prefix and format; an existing plot is refused before any work.
  auto svg = run_gpuscope({"analyze", db, "--json", "--plot-load-balancing", "--plot-format", "svg",
                           "--plot-prefix", dir_.file("lb")});
  ASSERT_EQ(svg.exit_code, 0) << svg.err;
  EXPECT_TRUE(svg_root(read_file(dir_.file("lb-load-balance.svg"))));
  EXPECT_FALSE(fs::exists(dir_.file("lb-timeseries.svg")));
  auto refused = run_gpuscope({"analyze", db, "-plb"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("train-load-balance.png exists"), std::string::npos);
  EXPECT_NE(refused.err.find("--plot-prefix"), std::string::npos) << refused.err;
  EXPECT_TRUE(refused.out.empty()) << "nothing should be printed before the refusal";
  EXPECT_EQ(run_gpuscope({"analyze", db, "-plb", "-f"}).exit_code, 0);
}

TEST_F(PlotsCli, BadPlotOptionsSayWhatWasWrong) {
  const auto db = profile("h100", "run");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"report", db, "--format", "gif", "-o", dir_.file("x")}, "unknown report format 'gif'"},
      {{"report", db, "--format", "png", "--size", "big", "-o", dir_.file("x")},
       "cannot read plot size 'big'"},
      {{"report", db, "--format", "png", "--size", "50x50", "-o", dir_.file("x")}, "50"},
      {{"report", db, "--format", "png", "--heatmap-metric", "bogus", "-o", dir_.file("x")},
       "unknown metric 'bogus'"},
      // Missing folders are created; one that cannot be is refused.
      {{"report", db, "--format", "png", "-o", "/proc/gpuscope-missing/x"}, "cannot create"},
      {{"report", db, "-o", "/proc/gpuscope-missing/x.html"}, "cannot create"},
      {{"report", db, "--size", "800x500", "-o", dir_.file("x.html")}, "for the static plots"},
      {{"analyze", db, "--plot-prefix", dir_.file("x")}, "--plot-prefix without a plot"},
      {{"analyze", db, "-pts", "--plot-format", "bmp"}, "unknown plot format 'bmp'"},
  };
  for (const Case& c : cases) {
    auto r = run_gpuscope(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[2] << " " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "run.db" || name.rfind("run.db", 0) == 0 || name == "state.json") << name;
  }
}

}  // namespace
}  // namespace gpuscope::testing
