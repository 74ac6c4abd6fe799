// The static plots drawn from analyses built by feeding the Analyzer synthetic GPUs: files of the
// right kind and size, with content, saying what is not supported, and clear errors.
#include "report/plots/plots.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "analyze/analyzer.hpp"
#include "core/error.hpp"
#include "plots/image_check.hpp"
#include "support/planted_links.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::report::plots {
namespace {

namespace fs = std::filesystem;
using gpuscope::testing::leftovers;
using gpuscope::testing::PlantedLinks;
using gpuscope::testing::png_decode;
using gpuscope::testing::png_header;
using gpuscope::testing::predictable_temporary_names;
using gpuscope::testing::read_file;
using gpuscope::testing::svg_root;
using gpuscope::testing::TempDir;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

analyze::RunMeta run() {
  analyze::RunMeta r;
  r.run_id = 1;
  r.host = "node0";
  r.label = "train";
  r.start_wall_ns = 1'000'000'000'000;
  r.sampling_interval_s = 1.0;
  r.status = "finished";
  return r;
}

// A GPU sampled every second for 120 s: idle for the first 15 s, then busy at `busy_pct` SM
// activity with a slow wave on power, temperature and clocks. Without `gpm` it has no GPM
// metrics (SM active, pipes, DRAM): those stay NaN, as on a GPU that does not support them.
analyze::DeviceSeries gpu(unsigned index, double busy_pct, bool gpm = true) {
  analyze::DeviceSeries d;
  d.key.host = "node0";
  d.key.device_index = index;
  d.sampling_interval_s = 1.0;
  for (std::size_t i = 0; i < 120; ++i) {
    const double t = static_cast<double>(i);
    const bool busy = i >= 15;
    const double wave = std::sin(t / 9.0 + index);
    d.t_s.push_back(t);
    for (auto& v : d.values) v.push_back(kNaN);
    auto set = [&](Metric m, double v) { d.values[static_cast<std::size_t>(m)].back() = v; };
    set(Metric::PowerW, busy ? 300 + 60 * wave * busy_pct / 100 : 90);
    set(Metric::PowerLimitW, 400);
    set(Metric::GpuUtilPct, busy ? 95 + 5 * wave : 0);
    set(Metric::MemUtilPct, busy ? 40 + 10 * wave : 0);
    set(Metric::TemperatureC, busy ? 60 + 0.1 * t + 3 * wave : 38);
    set(Metric::SmClockMhz, busy ? 1700 + 50 * wave : 210);
    set(Metric::MemClockMhz, busy ? 1593 : 405);
    set(Metric::GraphicsClockMhz, busy ? 1700 + 50 * wave : 210);
    set(Metric::MemoryUsedBytes, busy ? 30e9 + 1e8 * t : 1e9);
    set(Metric::MemoryFreeBytes, busy ? 50e9 - 1e8 * t : 79e9);
    set(Metric::PcieTxBytesPerS, busy ? 2e9 + 1e9 * wave : 1e6);
    set(Metric::PcieRxBytesPerS, busy ? 3e9 + 1e9 * wave : 1e6);
    if (gpm) {
      set(Metric::SmActivePct, busy ? busy_pct + 5 * wave : 0);
      set(Metric::SmOccupancyPct, busy ? busy_pct / 2 : 0);
      set(Metric::TensorActivePct, busy ? busy_pct / 3 : 0);
      set(Metric::Fp32ActivePct, busy ? busy_pct / 4 : 0);
      set(Metric::Fp16ActivePct, busy ? 5 : 0);
      set(Metric::Fp64ActivePct, 0);
      set(Metric::DramActivePct, busy ? 50 + 20 * wave : 0);
    }
  }
  return d;
}

analyze::Analysis analyse(const std::vector<analyze::DeviceSeries>& gpus,
                          std::vector<Metric> grid = {Metric::SmActivePct, Metric::GpuUtilPct}) {
  analyze::AnalysisOptions options;
  options.gpu_grid_metrics = std::move(grid);
  analyze::Analyzer analyzer(options, {run()});
  for (const auto& d : gpus) {
    std::vector<double> activity;
    for (std::size_t i = 0; i < d.t_s.size(); ++i) {
      activity.push_back(
          analyze::sample_activity(d.of(Metric::SmActivePct)[i], d.of(Metric::GpuUtilPct)[i]));
    }
    analyzer.add_activity(d.t_s, activity);
  }
  analyzer.finish_activity();
  for (const auto& d : gpus) analyzer.add_device(d);
  return analyzer.finish();
}

// Four GPUs, GPU 2 straggling at half the activity of the others.
analyze::Analysis four_gpus() {
  return analyse({gpu(0, 80), gpu(1, 82), gpu(2, 40), gpu(3, 79)});
}

std::string desc_of(const std::string& svg) {
  const auto begin = svg.find("<desc>");
  const auto end = svg.find("</desc>");
  if (begin == std::string::npos || end == std::string::npos) return {};
  return svg.substr(begin, end - begin);
}

TEST(Plots, PngFilesHaveTheSizeAskedForAndRealContent) {
  TempDir dir;
  PlotOptions options;
  options.format = PlotFormat::Png;
  options.width_px = 1200;
  options.height_px = 800;
  const auto files = write_plots(four_gpus(), dir.file("run"), options);
  ASSERT_EQ(files.size(), 4u);
  const std::vector<std::string> names = {"run-timeseries.png", "run-load-balance.png",
                                          "run-heatmap.png", "run-overview.png"};
  for (std::size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(files[i].string());
    EXPECT_EQ(files[i].filename().string(), names[i]);
    const auto header = png_header(files[i].string());
    ASSERT_TRUE(header) << "not a PNG";
    EXPECT_EQ(header->width, 1200u);
    EXPECT_EQ(header->height, 800u);
    const auto pixels = png_decode(files[i].string());
    ASSERT_TRUE(pixels) << "libpng cannot decode it";
    EXPECT_EQ(pixels->width, 1200u);
    // Lines, bands, text and a colour scale: many colours, and more than a sliver drawn.
    EXPECT_GT(pixels->distinct_colours, 50u);
    EXPECT_GT(pixels->non_background_fraction, 0.02);
  }
  // Nothing else left in the folder (no temporary files).
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 4u);
}

TEST(Plots, SvgRootHasTheSizeAndSaysWhatIsNotSupported) {
  TempDir dir;
  PlotOptions options;
  options.format = PlotFormat::Svg;
  const auto files = write_plots(four_gpus(), dir.file("run"), options);
  ASSERT_EQ(files.size(), 4u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    EXPECT_EQ(file.extension(), ".svg");
    const std::string svg = read_file(file.string());
    const auto root = svg_root(svg);
    ASSERT_TRUE(root) << "no <svg> root";
    EXPECT_EQ(root->width, "1600pt");
    EXPECT_EQ(root->height, "1000pt");
    EXPECT_EQ(root->view_box, "0 0 1600 1000");
    EXPECT_NE(svg.find("<title>gpuscope: "), std::string::npos);
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << "truncated";
  }
  // The synthetic GPUs have no NVLink: its lines are said to be missing, not drawn at zero.
  const std::string desc = desc_of(read_file(files[0].string()));
  EXPECT_NE(desc.find("PCIe &amp; NVLink: NVLink TX not supported on these GPUs"),
            std::string::npos)
      << desc;
  EXPECT_EQ(desc.find("Power: not supported"), std::string::npos) << desc;
  // The straggler is named on the load-balance plot.
  EXPECT_NE(desc_of(read_file(files[1].string())).find("straggler GPU 2"), std::string::npos);
}

TEST(Plots, PanelWithoutDataSaysNotSupportedOnThisGpu) {
  TempDir dir;
  PlotOptions options;
  options.format = PlotFormat::Svg;
  const auto files = write_plots(analyse({gpu(0, 80, /*gpm=*/false)}), dir.file("one"), options);
  const std::string desc = desc_of(read_file(files[0].string()));
  EXPECT_NE(desc.find("Compute pipes: not supported on this GPU"), std::string::npos) << desc;
  EXPECT_NE(desc.find("Temperatures: memory (HBM) not supported on this GPU"), std::string::npos)
      << desc;
  // One GPU: no balance to speak of, and the page says so.
  EXPECT_NE(desc_of(read_file(files[1].string())).find("at least two GPUs"), std::string::npos);
}

TEST(Plots, PdfIsOneDocumentWithAPagePerPlot) {
  TempDir dir;
  PlotOptions options;
  options.format = PlotFormat::Pdf;
  const auto files = write_plots(four_gpus(), dir.file("run"), options);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename().string(), "run.pdf");
  const std::string pdf = read_file(files[0].string());
  ASSERT_GT(pdf.size(), 1000u);
  EXPECT_EQ(pdf.substr(0, 5), "%PDF-");
  EXPECT_NE(pdf.find("/Count 4"), std::string::npos) << "expected 4 pages";
}

TEST(Plots, HeatmapWithoutPerGpuSeriesSaysHowToGetThem) {
  TempDir dir;
  PlotOptions options;
  options.format = PlotFormat::Svg;
  const auto files = write_plots(analyse({gpu(0, 80), gpu(1, 70)}, {}), dir.file("x"), options);
  EXPECT_NE(desc_of(read_file(files[2].string())).find("no per-GPU series kept"),
            std::string::npos);
}

TEST(Plots, HeatmapOfAChosenMetricNotKeptSaysSo) {
  TempDir dir;
  PlotOptions options;
  options.format = PlotFormat::Svg;
  options.heatmap_metric = Metric::TemperatureC;
  EXPECT_EQ(grid_metrics_for_plots(options), std::vector<Metric>{Metric::TemperatureC});
  const auto files = write_plots(four_gpus(), dir.file("x"), options);
  EXPECT_NE(desc_of(read_file(files[2].string())).find("temperature_c not supported"),
            std::string::npos);
  // Kept, it is drawn: no note.
  const auto kept = write_plots(analyse({gpu(0, 80), gpu(1, 70)}, {Metric::TemperatureC}),
                                dir.file("y"), options);
  EXPECT_EQ(desc_of(read_file(kept[2].string())), "<desc>");
}

TEST(Plots, EmptyAnalysisStillDrawsEveryPage) {
  TempDir dir;
  PlotOptions options;
  options.format = PlotFormat::Svg;
  const auto files = write_plots(analyze::Analysis{}, dir.file("empty"), options);
  ASSERT_EQ(files.size(), 4u);
  for (const auto& file : files) {
    EXPECT_NE(desc_of(read_file(file.string())).find("no samples"), std::string::npos) << file;
  }
}

TEST(Plots, UnwritablePathIsAClearErrorAndLeavesNothing) {
  TempDir dir;
  const std::string missing_folder = dir.file("no/such/folder/run");
  try {
    write_plots(four_gpus(), missing_folder, PlotOptions{});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write plot"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no/such/folder/run-timeseries.png"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
        << e.what();
  }
  // A file where the folder should be.
  { std::ofstream(dir.file("plain")) << "x"; }
  EXPECT_THROW(write_plots(four_gpus(), dir.file("plain/run"), PlotOptions{}), Error);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);  // only "plain"
}

// PLplot opens its file with fopen, which follows links. In a folder others may write
// (-o /tmp/run.png), links planted at every name the old scheme used (".<name>.<pid>.gpuscope-tmp")
// and at guessable ones are never written through: plots are drawn in a private folder.
TEST(Plots, PlantedLinksAtTemporaryNamesAreNeverFollowed) {
  TempDir dir;
  fs::create_directory(dir.file("shared"));
  std::vector<fs::path> names;
  std::vector<std::string> expected;
  for (const char* file : {"run-timeseries.png", "run-load-balance.png", "run-heatmap.png",
                           "run-overview.png", "run.pdf"}) {
    for (auto& name : predictable_temporary_names(dir.file("shared/") + file)) {
      names.push_back(std::move(name));
    }
    expected.emplace_back(file);
  }
  const PlantedLinks links(dir.file("victim"), names);
  PlotOptions options;
  options.width_px = 800;
  options.height_px = 500;
  const auto pngs = write_plots(four_gpus(), dir.file("shared/run"), options);
  options.format = PlotFormat::Pdf;
  write_plots(four_gpus(), dir.file("shared/run"), options);
  EXPECT_TRUE(links.victim_untouched());
  ASSERT_EQ(pngs.size(), 4u);
  for (const auto& png : pngs) EXPECT_TRUE(png_decode(png.string())) << png;
  EXPECT_EQ(read_file(dir.file("shared/run.pdf")).substr(0, 5), "%PDF-");
  EXPECT_EQ(leftovers(dir.file("shared"), links, expected), std::vector<std::string>{});
}

TEST(Plots, BadSizeAndPrefixAreUsageErrors) {
  TempDir dir;
  PlotOptions options;
  options.width_px = 10;
  try {
    write_plots(four_gpus(), dir.file("run"), options);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
  }
  EXPECT_THROW(write_plots(four_gpus(), dir.path() + "/", PlotOptions{}), Error);
}

TEST(Plots, ParsesFormats) {
  EXPECT_EQ(parse_plot_format("png"), PlotFormat::Png);
  EXPECT_EQ(parse_plot_format("svg"), PlotFormat::Svg);
  EXPECT_EQ(parse_plot_format("pdf"), PlotFormat::Pdf);
  EXPECT_THROW(parse_plot_format("gif"), Error);
  EXPECT_EQ(extension(PlotFormat::Pdf), "pdf");
}

TEST(Plots, ThreadsDrawingAtOnceEachGetTheirOwnFiles) {
  // PLplot keeps global state; write_plots serialises on it, so concurrent callers are safe.
  TempDir dir;
  const analyze::Analysis analysis = four_gpus();
  std::vector<std::vector<fs::path>> results(3);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      PlotOptions options;
      options.format = i == 1 ? PlotFormat::Svg : PlotFormat::Png;
      options.width_px = 800;
      options.height_px = 500;
      results[i] = write_plots(analysis, dir.file("t" + std::to_string(i)), options);
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < results.size(); ++i) {
    ASSERT_EQ(results[i].size(), 4u);
    if (i == 1) continue;
    const auto header = png_header(results[i][0].string());
    ASSERT_TRUE(header);
    EXPECT_EQ(header->width, 800u);
  }
}

}  // namespace
}  // namespace gpuscope::report::plots
