#include "report/plots/plots.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <sstream>
#include <system_error>

#include "core/error.hpp"
#include "core/output_check.hpp"
#include "report/html_report.hpp"
#include "report/plots/draw.hpp"
#include "report/plots/pages.hpp"
#include "report/plots/plot_stream.hpp"
#include "util/output_file.hpp"

namespace gpuscope::report::plots {
namespace {

namespace fs = std::filesystem;

std::string device_of(PlotFormat format) {
  switch (format) {
    case PlotFormat::Png:
      return "pngcairo";
    case PlotFormat::Svg:
      return "svgcairo";
    case PlotFormat::Pdf:
      return "pdfcairo";
  }
  return "pngcairo";
}

using Page = std::function<PageText(const PlotStream&)>;

struct NamedPage {
  PlotKind kind;
  std::string suffix;  // "-timeseries"
  Page draw;
};

constexpr std::string_view suffix_of(PlotKind kind) {
  switch (kind) {
    case PlotKind::TimeSeries:
      return "-timeseries";
    case PlotKind::LoadBalance:
      return "-load-balance";
    case PlotKind::Heatmap:
      return "-heatmap";
    case PlotKind::Overview:
      return "-overview";
  }
  return "";
}

bool wanted(const PlotOptions& options, PlotKind kind) {
  return options.kinds.empty() ||
         std::find(options.kinds.begin(), options.kinds.end(), kind) != options.kinds.end();
}

void check_prefix(const fs::path& output_prefix) {
  if (output_prefix.empty() || output_prefix.filename().empty()) {
    throw Error::usage(fmt::format("cannot name plots after '{}'", output_prefix.string()),
                       "the output prefix names no file", "give a prefix such as out/run42");
  }
}

// A plot being drawn in a private folder beside its final name (util::StagedFile: PLplot's
// fopen follows links, so it never opens a name anyone else could plant): renamed by commit(),
// removed otherwise, so a failure never leaves a half-drawn plot behind.
class PendingFile {
 public:
  // A link is followed (its target is replaced, the link stays), as for every output.
  explicit PendingFile(const fs::path& target)
      : staged_(fs::is_symlink(target) ? fs::canonical(target) : target) {
    if (const auto error = staged_.create()) {
      throw Error(fmt::format("cannot write plot {}", staged_.target().string()), error.message(),
                  "check that the folder exists and is writable");
    }
  }
  const fs::path& temporary() const { return staged_.path(); }
  void commit() {
    if (const auto error = staged_.commit()) throw_write_error(staged_.target(), error);
  }

 private:
  util::StagedFile staged_;
};

// Cairo draws text as glyph outlines, so an SVG would not say in words what it shows: add a
// <title> and a <desc> (read by screen readers and search) after the root element's start tag.
void describe_svg(const fs::path& file, const PageText& page) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string svg = buffer.str();
  const auto root = svg.find("<svg");
  const auto end = root == std::string::npos ? root : svg.find('>', root);
  if (end == std::string::npos) {
    throw Error(fmt::format("cannot describe plot {}", file.string()),
                "the SVG written by cairo has no root element");
  }
  std::string desc =
      fmt::format("\n<title>gpuscope: {}</title>\n<desc>", report::html_escape(page.title));
  for (std::size_t i = 0; i < page.notes.size(); ++i) {
    desc += (i == 0 ? "" : "\n") + report::html_escape(page.notes[i]);
  }
  desc += "</desc>";
  svg.insert(end + 1, desc);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << svg;
  if (!out) {
    throw Error(fmt::format("cannot write plot {}", file.string()),
                "writing the description failed");
  }
}

void require_nonempty(const fs::path& file, const fs::path& target) {
  std::error_code error;
  const auto size = fs::file_size(file, error);
  if (error || size == 0) {
    throw Error(fmt::format("cannot write plot {}", target.string()),
                error ? error.message() : "the driver wrote an empty file",
                "check the free space in its folder");
  }
}

}  // namespace

PlotFormat parse_plot_format(std::string_view text) {
  if (text == "png") return PlotFormat::Png;
  if (text == "svg") return PlotFormat::Svg;
  if (text == "pdf") return PlotFormat::Pdf;
  throw Error::usage(fmt::format("unknown plot format '{}'", text), {}, "use png, svg or pdf");
}

std::string_view extension(PlotFormat format) {
  switch (format) {
    case PlotFormat::Png:
      return "png";
    case PlotFormat::Svg:
      return "svg";
    case PlotFormat::Pdf:
      return "pdf";
  }
  return "png";
}

std::vector<Metric> grid_metrics_for_plots(const PlotOptions& options) {
  if (options.heatmap_metric) return {*options.heatmap_metric};
  return {Metric::SmActivePct, Metric::GpuUtilPct};
}

std::pair<int, int> parse_plot_size(std::string_view text) {
  const auto x = text.find('x');
  int width = 0, height = 0;
  const auto parse = [](std::string_view part, int& value) {
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    return error == std::errc() && end == part.data() + part.size();
  };
  if (x == std::string_view::npos || !parse(text.substr(0, x), width) ||
      !parse(text.substr(x + 1), height)) {
    throw Error::usage(fmt::format("cannot read plot size '{}'", text), {},
                       "give width x height in pixels, e.g. 1600x1000");
  }
  return {width, height};
}

std::vector<fs::path> plot_files(const fs::path& output_prefix, const PlotOptions& options) {
  check_prefix(output_prefix);
  const std::string prefix = output_prefix.string();
  if (options.format == PlotFormat::Pdf) return {prefix + ".pdf"};
  std::vector<fs::path> files;
  for (PlotKind kind : kAllPlots) {
    if (wanted(options, kind)) {
      files.emplace_back(
          fmt::format("{}{}.{}", prefix, suffix_of(kind), extension(options.format)));
    }
  }
  return files;
}

std::vector<fs::path> write_plots(const analyze::Analysis& analysis, const fs::path& output_prefix,
                                  const PlotOptions& options) {
  check_prefix(output_prefix);
  std::vector<NamedPage> pages;
  for (PlotKind kind : kAllPlots) {
    if (!wanted(options, kind)) continue;
    Page draw;
    switch (kind) {
      case PlotKind::TimeSeries:
        draw = [&](const PlotStream& s) { return draw_time_series_page(analysis, s); };
        break;
      case PlotKind::LoadBalance:
        draw = [&](const PlotStream& s) { return draw_load_balance_page(analysis, s); };
        break;
      case PlotKind::Heatmap:
        draw = [&](const PlotStream& s) {
          return draw_heatmap_page(analysis, s, options.heatmap_metric);
        };
        break;
      case PlotKind::Overview:
        draw = [&](const PlotStream& s) { return draw_overview_page(analysis, s); };
        break;
    }
    pages.push_back({kind, std::string(suffix_of(kind)), std::move(draw)});
  }
  const std::string device = device_of(options.format);
  const std::string prefix = output_prefix.string();
  std::vector<fs::path> written;

  if (options.format == PlotFormat::Pdf) {
    // One document, one page per plot.
    const fs::path target = prefix + ".pdf";
    PendingFile file(target);
    {
      PlotStream stream(device, file.temporary(), options.width_px, options.height_px, target);
      use_palette();
      for (const auto& page : pages) {
        page.draw(stream);
        stream.check(page.suffix.substr(1));
      }
      stream.finish();
    }
    require_nonempty(file.temporary(), target);
    file.commit();
    written.push_back(target);
    return written;
  }

  for (const auto& page : pages) {
    const fs::path target = fmt::format("{}{}.{}", prefix, page.suffix, extension(options.format));
    PendingFile file(target);
    PageText text;
    {
      PlotStream stream(device, file.temporary(), options.width_px, options.height_px, target);
      use_palette();
      text = page.draw(stream);
      stream.finish();
    }
    require_nonempty(file.temporary(), target);
    if (options.format == PlotFormat::Svg) describe_svg(file.temporary(), text);
    file.commit();
    written.push_back(target);
  }
  return written;
}

}  // namespace gpuscope::report::plots
