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

// What a panel shows: each setting's spread over its repeats, and every successful trial.
struct PanelPoints {
  std::vector<double> xs, means, lows, highs;  // per setting with a summary
  std::vector<double> trial_x, trial_y;        // the trials kept
  std::vector<double> outlier_x, outlier_y;    // the outlier repeats
};

// The panel's points of `def`'s quantity, from the record's summaries and successful trials.
PanelPoints panel_points(const sweep::SweepRecord& r, const PanelDef& def) {
  PanelPoints p;
  for (const auto& s : r.summaries) {
    const auto spread = def.summary(s);
    if (!spread || spread->count == 0) continue;
    p.xs.push_back(s.setting);
    p.means.push_back(spread->mean);
    p.lows.push_back(spread->min);
    p.highs.push_back(spread->max);
  }
  for (const auto& t : r.trials) {
    if (t.status != sweep::TrialStatus::Ok) continue;
    const auto v = def.trial(t);
    if (!v) continue;
    (t.outlier ? p.outlier_x : p.trial_x).push_back(t.setting);
    (t.outlier ? p.outlier_y : p.trial_y).push_back(*v);
  }
  return p;
}

// A range of an axis, in its units.
struct Range {
  double lo = 1e300, hi = -1e300;
};

// The planned settings' range (0..1 when there is no plan).
Range setting_range(const sweep::SweepRecord& r) {
  Range x;
  for (const auto& p : r.plan) {
    x.lo = std::min(x.lo, p.value);
    x.hi = std::max(x.hi, p.value);
  }
  if (x.lo > x.hi) x.lo = 0, x.hi = 1;
  return x;
}

// The range of the spreads' ends and the trials' values (empty, lo > hi, when there are none).
Range value_range(const PanelPoints& p) {
  Range y;
  for (const auto* v : {&p.lows, &p.highs, &p.trial_y, &p.outlier_y}) {
    for (double value : *v) {
      y.lo = std::min(y.lo, value);
      y.hi = std::max(y.hi, value);
    }
  }
  return y;
}

// A panel without a summary: its frame and title, with why it is empty.
void draw_empty_panel(const PanelDef& def, double x_lo, double x_hi) {
  plwind(x_lo, x_hi, 0, 1);
  set_colour(Colour::Ink);
  plbox("bcnst", 0, 0, "bc", 0, 0);
  plmtex("t", 1.2, 0.0, 0.0, def.title.c_str());
  centred_message(def.needs_work ? "no work measured: give --work-regex or --work-units"
                                 : "no successful trial");
}

// The panel's frame over `x` and `y` (padded), with the grid, the title and the setting's axis.
void draw_frame(const sweep::SweepRecord& r, const PanelDef& def, double x_lo, double x_hi,
                const Range& y) {
  const double ypad = std::max((y.hi - y.lo) * 0.12, std::abs(y.hi) * 0.02 + 1e-9);
  plwind(x_lo, x_hi, std::max(0.0, y.lo - ypad), y.hi + ypad * 1.6);
  set_colour(Colour::Grid);
  plbox("g", 0, 0, "g", 0, 0);
  set_colour(Colour::Ink);
  plbox("bcnst", 0, 0, "bcnstv", 0, 0);
  plmtex("t", 1.2, 0.0, 0.0, fmt::format("{} ({})", def.title, def.unit).c_str());
  plmtex("b", 2.8, 0.5, 0.5,
         fmt::format("{} ({})", r.knob == sweep::Knob::PowerLimit ? "power limit" : "SM clock",
                     sweep::knob_unit(r.knob))
             .c_str());
}

// The recommended settings as dashed lines across the panel.
void draw_recommendation_lines(const sweep::SweepRecord& r) {
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
}

// Each setting's min–max spread as a bar and the line through the means, by setting.
void draw_spreads_and_means(const PanelPoints& p) {
  set_colour(series_colour(0));
  plwidth(2.0);
  for (std::size_t i = 0; i < p.xs.size(); ++i) plerry(1, &p.xs[i], &p.lows[i], &p.highs[i]);
  std::vector<std::size_t> order(p.xs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return p.xs[a] < p.xs[b]; });
  std::vector<double> sx, sy;
  for (auto i : order) {
    sx.push_back(p.xs[i]);
    sy.push_back(p.means[i]);
  }
  draw_line(sx, sy, 0);
  plwidth(1.0);
}

// The trials as dots, the outlier repeats as red crosses.
void draw_trials(const PlotStream& stream, const PanelPoints& p) {
  text_size(stream, 9);
  set_colour(series_colour(1));
  if (!p.trial_x.empty())
    plstring(static_cast<PLINT>(p.trial_x.size()), p.trial_x.data(), p.trial_y.data(), "●");
  set_colour(Colour::Straggler);
  text_size(stream, 14);
  if (!p.outlier_x.empty())
    plstring(static_cast<PLINT>(p.outlier_x.size()), p.outlier_x.data(), p.outlier_y.data(), "×");
}

// The selectors' letters at the top of their settings' lines, one label per setting ("ED"
// where two selectors recommend the same one).
void draw_recommendation_letters(const sweep::SweepRecord& r, const PlotStream& stream) {
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
}

// One panel of the plot: `def`'s quantity against the setting, in `box`.
void draw_panel(const sweep::SweepRecord& r, const PlotStream& stream, const PanelDef& def,
                const Box& box) {
  plvpor(box.x0, box.x1, box.y0, box.y1);
  const PanelPoints points = panel_points(r, def);
  const Range x = setting_range(r);
  const double pad = std::max((x.hi - x.lo) * 0.05, 1.0);
  text_size(stream, 14);
  if (points.xs.empty()) {
    draw_empty_panel(def, x.lo - pad, x.hi + pad);
    return;
  }
  draw_frame(r, def, x.lo - pad, x.hi + pad, value_range(points));
  draw_recommendation_lines(r);
  // Spread, mean line, then the trials on top; letters last, so that lines do not cross them.
  draw_spreads_and_means(points);
  draw_trials(stream, points);
  draw_recommendation_letters(r, stream);
  set_colour(Colour::Ink);
}

}  // namespace

void write_sweep_plot(const sweep::SweepRecord& r, const fs::path& png, int width, int height) {
  // Drawn in a private folder beside `png` (PLplot's fopen follows links) and renamed over it.
  util::StagedFile staged(png);
  if (auto error = staged.create()) {
    throw Error(fmt::format("cannot write plot {}", png.string()), error.message(),
                "check that the folder is writable");
  }
  {
    PlotStream stream("pngcairo", staged.path(), width, height, png);
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
  if (auto error = staged.commit()) {
    throw Error(fmt::format("cannot write plot {}", png.string()), error.message(),
                "check that the folder is writable");
  }
}

}  // namespace gpuscope::report::plots
