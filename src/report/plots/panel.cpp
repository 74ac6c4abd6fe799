#include "report/plots/panel.hpp"

#include <fmt/format.h>
#include <plplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace gpuscope::report::plots {
namespace {

const std::vector<analyze::SpacePoint>& points_of(const analyze::Analysis& a, Metric m) {
  return a.over_space[static_cast<std::size_t>(m)];
}

struct Columns {
  std::vector<double> t, mean, min, max;
};

Columns columns(const std::vector<analyze::SpacePoint>& points, double t_divisor, double divisor) {
  Columns c;
  for (const auto& p : points) {
    // A bin's value is drawn at its middle.
    c.t.push_back(p.t_s / t_divisor);
    c.mean.push_back(p.mean / divisor);
    c.min.push_back(p.min / divisor);
    c.max.push_back(p.max / divisor);
  }
  return c;
}

struct LegendEntry {
  std::string text;
  std::optional<Colour> line;  // none: text only (in the muted colour)
  bool dashed = false;
};

// One legend entry (PLplot's legend) above the frame, centred `x` away from the frame's middle
// (normalised viewport units); returns its width in those units.
double legend_entry(const LegendEntry& entry, double x, bool visible) {
  const PLINT opt = entry.line ? PL_LEGEND_LINE : PL_LEGEND_NONE;
  const PLINT text_colour =
      static_cast<PLINT>(!visible ? Colour::Invisible : (entry.line ? Colour::Ink : Colour::Muted));
  const PLINT line_colour =
      static_cast<PLINT>(visible && entry.line ? *entry.line : Colour::Invisible);
  const PLINT line_style = entry.dashed ? 2 : 1;
  const PLFLT line_width = 2.5;
  const char* text = entry.text.c_str();
  PLFLT width = 0, height = 0;
  pllegend(&width, &height, 0, PL_POSITION_TOP | PL_POSITION_OUTSIDE, x, 0.01,
           entry.line ? 0.035 : 0.0, static_cast<PLINT>(Colour::Background),
           static_cast<PLINT>(Colour::Ink), 1, 1, 1, 1, &opt, entry.line ? 0.5 : 0.0, 1.0, 1.6, 0.0,
           &text_colour, &text, nullptr, nullptr, nullptr, nullptr, &line_colour, &line_style,
           &line_width, nullptr, nullptr, nullptr, nullptr);
  return width;
}

// The legend in one row above the frame, right-aligned on it. PLplot cannot measure text, so
// each entry is laid out once invisibly to learn its width; the font shrinks until the row
// fits beside the title.
void draw_legend(const std::vector<LegendEntry>& entries, double title_fraction, double font_px,
                 const PanelContext& context) {
  if (entries.empty()) return;
  constexpr double kGap = 0.012;
  std::vector<double> widths(entries.size());
  for (double scale : {0.85, 0.75, 0.65}) {
    plschr(context.stream.mm(font_px * scale), 1.0);
    double total = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      widths[i] = legend_entry(entries[i], 0, false);
      total += widths[i] + kGap;
    }
    if (total <= 1.0 - title_fraction) break;
  }
  double right = 1.0;
  for (std::size_t i = entries.size(); i-- > 0;) {
    legend_entry(entries[i], right - widths[i] / 2 - 0.5, true);
    right -= widths[i] + kGap;
  }
  plschr(context.stream.mm(font_px), 1.0);
}

// A panel's y range in display units (0 always inside it), and how many of its lines have data.
struct YExtent {
  double min = 0, max = 0;
  std::size_t with_data = 0;
};

// The y range over every band (or line) with data, and the reference.
YExtent y_extent(const PanelSpec& spec, const analyze::Analysis& a, const DisplayUnit& unit) {
  YExtent y;
  for (const auto& line : spec.lines) {
    const auto& points = points_of(a, line.metric);
    if (points.empty()) continue;
    ++y.with_data;
    for (const auto& p : points) {
      y.max = std::max(y.max, (line.band ? p.max : p.mean) / unit.divisor);
      y.min = std::min(y.min, (line.band ? p.min : p.mean) / unit.divisor);
    }
  }
  if (spec.reference) y.max = std::max(y.max, *spec.reference);
  return y;
}

// The title above the frame, on the left, a little larger than the panel's text.
void draw_title(const PanelSpec& spec, const PanelContext& context) {
  set_colour(Colour::Ink);
  plschr(context.stream.mm(context.font_px * 1.1), 1.0);
  plmtex("t", 0.9, 0.0, 0.0, spec.title.c_str());
  plschr(context.stream.mm(context.font_px), 1.0);
}

// A panel none of whose metrics has data: the empty frame with why in it; returns the note.
std::string draw_empty_panel(const PanelSpec& spec, const PanelContext& context, bool x_labels) {
  const analyze::Analysis& a = context.analysis;
  plwind(0, context.x_max, 0, 1);
  set_colour(Colour::Ink);
  plbox("bcnst", 0, 0, "bc", 0, 0);
  if (x_labels) plmtex("b", 2.6, 0.5, 0.5, context.axis.label.c_str());
  const std::string message =
      a.gpus.empty() ? "no samples" : fmt::format("not supported on {}", these_gpus(a));
  plschr(context.stream.mm(context.font_px * 1.2), 1.0);
  centred_message(message);
  plschr(context.stream.mm(context.font_px), 1.0);
  return fmt::format("{}: {}", spec.title, message);
}

// The frame over the y range (with headroom; 0–100 at least for percentages), the trimmed
// edges shaded, the axes and their names.
void draw_frame(const PanelSpec& spec, const PanelContext& context, const YExtent& y,
                const DisplayUnit& unit, bool x_labels) {
  double top = spec.percent ? std::max(100.0, y.max * 1.02) : (y.max > 0 ? y.max * 1.12 : 1.0);
  if (!spec.percent && y.max > 0 && y.max < 1e-9) top = 1;
  const double bottom = y.min < 0 ? y.min * 1.12 : 0.0;
  plwind(0, context.x_max, bottom, top);
  shade_trimmed(context.analysis.window, context.axis.divisor, 0, context.x_max, bottom, top);
  draw_axes();
  set_colour(Colour::Ink);
  const std::string y_label = unit.unit;
  plmtex("l", 5.0, 0.5, 0.5, y_label.c_str());
  if (x_labels) plmtex("b", 2.6, 0.5, 0.5, context.axis.label.c_str());
}

// What drawing a panel's lines left for its legend and notes.
struct DrawnLines {
  std::vector<LegendEntry> legend;       // the lines drawn
  std::vector<std::string> unsupported;  // the labels of the lines without data
  std::vector<std::string> notes;
};

// Each line with data as its mean (with the min–max band when there are several GPUs), each
// in its colour; the lines without data are said in the notes instead.
DrawnLines draw_lines(const PanelSpec& spec, const PanelContext& context, const DisplayUnit& unit) {
  const analyze::Analysis& a = context.analysis;
  DrawnLines drawn;
  // Bins farther apart than 1.5 resolutions have a gap between them: no line across it.
  const double max_gap = 1.5 * a.resolution_s / context.axis.divisor;
  std::size_t next_colour = 0;
  for (const auto& line : spec.lines) {
    const std::size_t colour_index = next_colour++;
    const Colour colour = line.colour.value_or(series_colour(colour_index));
    const auto& points = points_of(a, line.metric);
    if (points.empty()) {
      drawn.unsupported.push_back(line.label);
      drawn.notes.push_back(
          fmt::format("{}: {} not supported on {}", spec.title, line.label, these_gpus(a)));
      continue;
    }
    const Columns c = columns(points, context.axis.divisor, unit.divisor);
    if (line.band && a.gpus.size() > 1) {
      plcol0(static_cast<PLINT>(line.colour ? colour : band_colour(colour_index)));
      fill_band(c.t, c.min, c.max, max_gap);
    }
    set_colour(colour);
    plwidth(2.0);
    if (line.dashed) pllsty(2);
    draw_line(c.t, c.mean, max_gap);
    pllsty(1);
    plwidth(1.0);
    drawn.legend.push_back({line.label, colour, line.dashed});
  }
  return drawn;
}

// The horizontal reference (the memory total) as a dashed line across the panel.
void draw_reference(double reference, const PanelContext& context) {
  const std::array<PLFLT, 2> xs = {0, context.x_max};
  const std::array<PLFLT, 2> ys = {reference, reference};
  set_colour(Colour::Limit);
  plwidth(1.8);
  pllsty(2);
  plline(2, xs.data(), ys.data());
  pllsty(1);
  plwidth(1.0);
}

// The legend above the frame, beside the title, when it says more than one line's name: the
// lines, the reference, and first the lines without data.
void draw_panel_legend(const PanelSpec& spec, const Box& box, const PanelContext& context,
                       std::vector<LegendEntry> legend,
                       const std::vector<std::string>& unsupported) {
  if (spec.reference) legend.push_back({spec.reference_label, Colour::Limit, true});
  if (!unsupported.empty()) {
    std::string text = "not supported: ";
    for (std::size_t i = 0; i < unsupported.size(); ++i) text += (i ? ", " : "") + unsupported[i];
    legend.insert(legend.begin(), {text, std::nullopt, false});
  }
  if (legend.size() > 1 || spec.reference || !unsupported.empty()) {
    // The title's share of the frame's width, estimated (PLplot cannot measure text).
    const double frame_px = (box.x1 - box.x0) * context.stream.width();
    const double title =
        (static_cast<double>(spec.title.size()) * 0.56 * context.font_px * 1.1 + 16) / frame_px;
    draw_legend(legend, title, context.font_px, context);
  }
}

}  // namespace

PanelContext panel_context(const analyze::Analysis& analysis, const PlotStream& stream,
                           double font_px) {
  double end_s = analysis.duration_s + analysis.resolution_s;
  for (const auto& points : analysis.over_space) {
    if (!points.empty()) end_s = std::max(end_s, points.back().t_s + analysis.resolution_s);
  }
  PanelContext context{analysis, stream, time_axis_for(end_s), 1, font_px};
  context.x_max = end_s > 0 ? end_s / context.axis.divisor : 1;
  return context;
}

std::optional<double> memory_total_bytes(const analyze::Analysis& analysis) {
  std::optional<double> total;
  auto mean_of = [](const analyze::GpuReport& g, Metric m) -> std::optional<double> {
    const auto& s = g.over_time[static_cast<std::size_t>(m)];
    return s ? std::optional(s->mean) : std::nullopt;
  };
  for (const auto& g : analysis.gpus) {
    const auto used = mean_of(g, Metric::MemoryUsedBytes);
    const auto free = mean_of(g, Metric::MemoryFreeBytes);
    if (!used || !free) continue;
    const double gpu_total = *used + *free + mean_of(g, Metric::MemoryReservedBytes).value_or(0);
    total = std::max(total.value_or(0), gpu_total);
  }
  return total;
}

std::vector<std::string> draw_panel(const PanelSpec& spec, const Box& box,
                                    const PanelContext& context, bool x_labels) {
  plschr(context.stream.mm(context.font_px), 1.0);
  plvpor(box.x0, box.x1, box.y0, box.y1);
  const DisplayUnit unit = spec.lines.empty() ? DisplayUnit{} : display_unit(spec.lines[0].metric);
  const YExtent y = y_extent(spec, context.analysis, unit);
  draw_title(spec, context);
  if (y.with_data == 0) return {draw_empty_panel(spec, context, x_labels)};

  draw_frame(spec, context, y, unit, x_labels);
  DrawnLines drawn = draw_lines(spec, context, unit);
  if (spec.reference) draw_reference(*spec.reference, context);
  draw_panel_legend(spec, box, context, std::move(drawn.legend), drawn.unsupported);
  return drawn.notes;
}

}  // namespace gpuscope::report::plots
