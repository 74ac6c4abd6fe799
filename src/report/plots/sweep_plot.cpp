#include "report/plots/sweep_plot.hpp"

#include <fmt/format.h>
#include <plplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "report/plots/draw.hpp"
#include "report/plots/plot_stream.hpp"
#include "util/command_line.hpp"
#include "util/output_file.hpp"

namespace gpuscope::report::plots {
namespace {

namespace fs = std::filesystem;

using TrialValue = std::function<std::optional<double>(const sweep::Trial&)>;
using SummaryValue = std::function<std::optional<sweep::Spread>(const sweep::SettingSummary&)>;

struct PanelDef {
  std::string title;
  std::string unit;
  TrialValue trial;
  SummaryValue summary;
  bool needs_work = false;  // throughput and energy per unit need --work-regex/--work-units
};

// One letter per selector, drawn at the top of the recommended setting's dashed line.
std::string letter_of(const std::string& selector) {
  if (selector == "min_energy") return "E";
  if (selector == "min_edp") return "D";
  if (selector == "min_energy_bounded") return "B";
  return "Z";
}

void draw_panel(const sweep::SweepRecord& r, const PlotStream& stream, const PanelDef& def,
                const Box& box) {
  plvpor(box.x0, box.x1, box.y0, box.y1);
  std::vector<double> xs, means, lows, highs, trial_x, trial_y, outlier_x, outlier_y;
  for (const auto& s : r.summaries) {
    const auto spread = def.summary(s);
    if (!spread || spread->count == 0) continue;
    xs.push_back(s.setting);
    means.push_back(spread->mean);
    lows.push_back(spread->min);
    highs.push_back(spread->max);
  }
  for (const auto& t : r.trials) {
    if (t.status != sweep::TrialStatus::Ok) continue;
    const auto v = def.trial(t);
    if (!v) continue;
    (t.outlier ? outlier_x : trial_x).push_back(t.setting);
    (t.outlier ? outlier_y : trial_y).push_back(*v);
  }
  double x0 = 1e300, x1 = -1e300;
  for (const auto& p : r.plan) {
    x0 = std::min(x0, p.value);
    x1 = std::max(x1, p.value);
  }
  if (x0 > x1) x0 = 0, x1 = 1;
  const double pad = std::max((x1 - x0) * 0.05, 1.0);
  double y0 = 1e300, y1 = -1e300;
  for (const auto* v : {&lows, &highs, &trial_y, &outlier_y}) {
    for (double y : *v) {
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  }
  text_size(stream, 14);
  if (xs.empty()) {
    plwind(x0 - pad, x1 + pad, 0, 1);
    set_colour(Colour::Ink);
    plbox("bcnst", 0, 0, "bc", 0, 0);
    plmtex("t", 1.2, 0.0, 0.0, def.title.c_str());
    centred_message(def.needs_work ? "no work measured: give --work-regex or --work-units"
                                   : "no successful trial");
    return;
  }
  const double ypad = std::max((y1 - y0) * 0.12, std::abs(y1) * 0.02 + 1e-9);
  plwind(x0 - pad, x1 + pad, std::max(0.0, y0 - ypad), y1 + ypad * 1.6);
  set_colour(Colour::Grid);
  plbox("g", 0, 0, "g", 0, 0);
  set_colour(Colour::Ink);
  plbox("bcnst", 0, 0, "bcnstv", 0, 0);
  plmtex("t", 1.2, 0.0, 0.0, fmt::format("{} ({})", def.title, def.unit).c_str());
  plmtex("b", 2.8, 0.5, 0.5,
         fmt::format("{} ({})", r.knob == sweep::Knob::PowerLimit ? "power limit" : "SM clock",
                     sweep::knob_unit(r.knob))
             .c_str());

  // The recommended settings: dashed lines with their letters.
  for (const auto& c : r.recommendations) {
    if (!c.setting) continue;
    set_colour(Colour::Limit);
    pllsty(2);
    const std::array<PLFLT, 2> lx = {*c.setting, *c.setting};
    PLFLT ymin = 0, ymax = 0, xmin = 0, xmax = 0;
    plgvpw(&xmin, &xmax, &ymin, &ymax);
    const std::array<PLFLT, 2> ly = {ymin, ymax};
    plline(2, lx.data(), ly.data());
    pllsty(1);
  }
  // Spread, mean line, then the trials on top.
  set_colour(series_colour(0));
  plwidth(2.0);
  for (std::size_t i = 0; i < xs.size(); ++i) plerry(1, &xs[i], &lows[i], &highs[i]);
  std::vector<std::size_t> order(xs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return xs[a] < xs[b]; });
  std::vector<double> sx, sy;
  for (auto i : order) {
    sx.push_back(xs[i]);
    sy.push_back(means[i]);
  }
  draw_line(sx, sy, 0);
  plwidth(1.0);
  text_size(stream, 9);
  set_colour(series_colour(1));
  if (!trial_x.empty())
    plstring(static_cast<PLINT>(trial_x.size()), trial_x.data(), trial_y.data(), "●");
  set_colour(Colour::Straggler);
  text_size(stream, 14);
  if (!outlier_x.empty())
    plstring(static_cast<PLINT>(outlier_x.size()), outlier_x.data(), outlier_y.data(), "×");
  // Letters last, so that lines do not cross them.
  PLFLT xmin = 0, xmax = 0, ymin = 0, ymax = 0;
  plgvpw(&xmin, &xmax, &ymin, &ymax);
  std::vector<std::pair<double, std::string>> labels;
  for (const auto& c : r.recommendations) {
    if (!c.setting) continue;
    bool merged = false;
    for (auto& l : labels) {
      if (l.first == *c.setting) {
        l.second += letter_of(c.selector);
        merged = true;
      }
    }
    if (!merged) labels.emplace_back(*c.setting, letter_of(c.selector));
  }
  set_colour(Colour::Limit);
  text_size(stream, 13);
  for (const auto& [x, text] : labels) {
    plptex(x, ymax - (ymax - ymin) * 0.06, 1, 0, 0.5, text.c_str());
  }
  set_colour(Colour::Ink);
}

}  // namespace

void write_sweep_plot(const sweep::SweepRecord& r, const fs::path& png, int width, int height) {
  const fs::path temporary = util::temporary_path(png);
  {
    PlotStream stream("pngcairo", temporary, width, height, png);
    use_palette();
    pladv(0);
    const double h = stream.height();
    set_colour(Colour::Ink);
    text_size(stream, 22);
    page_text(
        0.012, 1.0 - 34.0 / h, 0.0,
        fmt::format("{} sweep: {}", r.knob == sweep::Knob::PowerLimit ? "Power-limit" : "SM-clock",
                    util::shell_command_line(r.command)));
    set_colour(Colour::Muted);
    text_size(stream, 14);
    const std::string legend =
        "line: mean · bars: min–max of the repeats · dots: trials (× outliers) · dashed: E min "
        "energy, D min energy×delay, B min energy within the slowdown bound, Z Zeus cost";
    page_text(0.012, 1.0 - 62.0 / h, 0.0, legend);
    const std::vector<PanelDef> panels = {
        {"Energy", "J", [](const sweep::Trial& t) { return t.energy_j; },
         [](const sweep::SettingSummary& s) { return std::optional<sweep::Spread>(s.energy_j); }},
        {"Time", "s", [](const sweep::Trial& t) { return std::optional<double>(t.time_s); },
         [](const sweep::SettingSummary& s) { return std::optional<sweep::Spread>(s.time_s); }},
        {"Throughput", "units/s", [](const sweep::Trial& t) { return t.throughput; },
         [](const sweep::SettingSummary& s) { return s.throughput; }, true},
        {"Energy per unit of work", "J/unit",
         [](const sweep::Trial& t) { return t.energy_per_unit_j; },
         [](const sweep::SettingSummary& s) { return s.energy_per_unit_j; }, true},
    };
    const double top = 1.0 - 110.0 / h, bottom = 70.0 / h, mid = (top + bottom) / 2;
    const std::array<Box, 4> boxes = {
        Box{0.07, 0.48, mid + 0.06, top}, Box{0.57, 0.98, mid + 0.06, top},
        Box{0.07, 0.48, bottom, mid - 0.03}, Box{0.57, 0.98, bottom, mid - 0.03}};
    for (std::size_t i = 0; i < panels.size(); ++i) draw_panel(r, stream, panels[i], boxes[i]);
    stream.finish();
  }
  if (auto error = util::commit_written_file(temporary, png)) {
    fs::remove(temporary, error);
    throw Error(fmt::format("cannot write plot {}", png.string()), error.message(),
                "check that the folder is writable");
  }
}

}  // namespace gpuscope::report::plots
