// The time-series page (every metric group) and the 3 × 2 overview, both built from panels.
#include <fmt/format.h>
#include <plplot.h>

#include <set>

#include "report/plots/draw.hpp"
#include "report/plots/pages.hpp"
#include "report/plots/panel.hpp"

namespace gpuscope::report::plots {
namespace {

constexpr double kFontPx = 15;

std::string duration_text(double s) {
  if (s < 120) return fmt::format("{:.1f} s", s);
  if (s < 2 * 3600) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.2f} h", s / 3600);
}

std::string window_text(const analyze::Analysis& a) {
  const analyze::Window& w = a.window;
  std::string trimmed;
  if (w.leading_trimmed_s > 0) trimmed += fmt::format("idle start {:.1f} s", w.leading_trimmed_s);
  if (w.trailing_trimmed_s > 0) {
    if (!trimmed.empty()) trimmed += " and ";
    trimmed += fmt::format("idle end {:.1f} s", w.trailing_trimmed_s);
  }
  if (trimmed.empty()) return fmt::format("statistics over {:.1f}–{:.1f} s", w.start_s, w.end_s);
  return fmt::format("statistics over {:.1f}–{:.1f} s ({} trimmed, shaded)", w.start_s, w.end_s,
                     trimmed);
}

std::string run_text(const analyze::Analysis& a) {
  std::set<std::string> hosts;
  for (const auto& g : a.gpus) hosts.insert(g.key.host);
  std::string gpus = fmt::format("{} GPU{}", a.gpus.size(), a.gpus.size() == 1 ? "" : "s");
  if (hosts.size() > 1) gpus += fmt::format(" on {} hosts", hosts.size());
  if (a.runs.size() == 1 && !a.runs[0].label.empty()) gpus = a.runs[0].label + " · " + gpus;
  return fmt::format("{} · {} · {}", gpus, duration_text(a.duration_s), window_text(a));
}

// Lays out `specs` in a rows × columns grid under the header; returns the notes of all panels.
std::vector<std::string> draw_grid(const analyze::Analysis& analysis, const PlotStream& stream,
                                   const std::vector<PanelSpec>& specs, int rows, int columns) {
  const PanelContext context = panel_context(analysis, stream, kFontPx);
  // Page fractions: room for the y numbers and unit on the left, titles above, numbers below.
  const double left = 0.07, right = 0.985, bottom = 0.075, top = 0.895;
  const double gap_x = 0.08;
  const double h_px = stream.height();
  const double above = 3.2 * kFontPx / h_px;  // title and legend
  const double below = 2.4 * kFontPx / h_px;  // tick numbers
  const double cell_w = (right - left - gap_x * (columns - 1)) / columns;
  const double cell_h = (top - bottom) / rows;
  std::vector<std::string> notes;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const int row = static_cast<int>(i) / columns;
    const int column = static_cast<int>(i) % columns;
    Box box;
    box.x0 = left + column * (cell_w + gap_x);
    box.x1 = box.x0 + cell_w;
    box.y1 = top - row * cell_h - above;
    box.y0 = top - (row + 1) * cell_h + below;
    const bool last_row =
        row == rows - 1 || static_cast<int>(i) + columns >= static_cast<int>(specs.size());
    auto panel_notes = draw_panel(specs[i], box, context, last_row);
    notes.insert(notes.end(), panel_notes.begin(), panel_notes.end());
  }
  return notes;
}

PanelLine limit_line(Metric metric, std::string label) {
  PanelLine line(metric, std::move(label));
  line.band = false;
  line.dashed = true;
  line.colour = Colour::Limit;
  return line;
}

PanelSpec memory_panel(const analyze::Analysis& a, std::string title) {
  PanelSpec spec(std::move(title), {{Metric::MemoryUsedBytes, "used"}});
  if (const auto total = memory_total_bytes(a)) {
    spec.reference = *total / display_unit(Metric::MemoryUsedBytes).divisor;
    spec.reference_label = fmt::format("total {:.0f} GiB", *spec.reference);
  }
  return spec;
}

}  // namespace

void draw_header(const analyze::Analysis& analysis, const PlotStream& stream,
                 const std::string& title, const std::string& subtitle) {
  const double h = stream.height();
  set_colour(Colour::Ink);
  text_size(stream, 22);
  page_text(0.012, 1.0 - 34.0 / h, 0.0, title);
  set_colour(Colour::Muted);
  text_size(stream, 14);
  page_text(0.012, 1.0 - 62.0 / h, 0.0, subtitle.empty() ? run_text(analysis) : subtitle);
  set_colour(Colour::Ink);
}

PageText draw_time_series_page(const analyze::Analysis& a, const PlotStream& stream) {
  PageText page{"Time series across GPUs: mean (line) and min–max (band)", {}};
  pladv(0);
  draw_header(a, stream, page.title);
  const std::vector<PanelSpec> specs = {
      {"Power", {{Metric::PowerW, "power"}, limit_line(Metric::PowerLimitW, "limit")}},
      {"Utilization & SM activity",
       {{Metric::GpuUtilPct, "GPU utilization"},
        {Metric::SmActivePct, "SM active"},
        {Metric::SmOccupancyPct, "SM occupancy"}},
       true},
      {"Compute pipes",
       {{Metric::TensorActivePct, "tensor"},
        {Metric::Fp64ActivePct, "FP64"},
        {Metric::Fp32ActivePct, "FP32"},
        {Metric::Fp16ActivePct, "FP16"},
        {Metric::FlopActivePct, "FLOP activity (sum)"}},
       true},
      {"Memory bandwidth",
       {{Metric::DramActivePct, "DRAM active"}, {Metric::MemUtilPct, "memory utilization"}},
       true},
      {"PCIe & NVLink",
       {{Metric::PcieTxBytesPerS, "PCIe TX"},
        {Metric::PcieRxBytesPerS, "PCIe RX"},
        {Metric::NvlinkTxBytesPerS, "NVLink TX"},
        {Metric::NvlinkRxBytesPerS, "NVLink RX"}}},
      {"Temperatures",
       {{Metric::TemperatureC, "GPU"}, {Metric::MemoryTemperatureC, "memory (HBM)"}}},
      {"Clocks",
       {{Metric::SmClockMhz, "SM"},
        {Metric::MemClockMhz, "memory"},
        {Metric::GraphicsClockMhz, "graphics"}}},
      memory_panel(a, "Memory"),
  };
  page.notes = draw_grid(a, stream, specs, 4, 2);
  return page;
}

PageText draw_overview_page(const analyze::Analysis& a, const PlotStream& stream) {
  PageText page{"Overview", {}};
  pladv(0);
  draw_header(a, stream, page.title);
  const std::vector<PanelSpec> specs = {
      {"Power", {{Metric::PowerW, "power"}, limit_line(Metric::PowerLimitW, "power cap")}},
      {"GPU utilization", {{Metric::GpuUtilPct, "utilization"}}, true},
      {"GPU temperature", {{Metric::TemperatureC, "temperature"}}},
      memory_panel(a, "Memory used"),
      {"SM clock", {{Metric::SmClockMhz, "SM clock"}}},
      {"Memory clock", {{Metric::MemClockMhz, "memory clock"}}},
  };
  page.notes = draw_grid(a, stream, specs, 3, 2);
  return page;
}

}  // namespace gpuscope::report::plots
