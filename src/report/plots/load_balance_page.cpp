// Load balance: each GPU's time-averaged activity in the window with the p5–p95 spread of its
// samples as an error bar; stragglers in red and named; the median as a dashed line.
#include <fmt/format.h>
#include <plplot.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/metrics.hpp"
#include "core/vendor.hpp"
#include "report/plots/draw.hpp"
#include "report/plots/pages.hpp"

namespace gpuscope::report::plots {
namespace {

constexpr std::size_t kMaxNamedStragglers = 12;
constexpr std::size_t kMaxAxisLabels = 32;

std::string activity_name(const std::string& metric, Vendor vendor) {
  if (metric == "sm_active_pct") return "SM active";
  return std::string(metric_meaning(Metric::GpuUtilPct, vendor)->label);
}

// One point per GPU with activity: position, activity (%), p5–p95 and whether it straggles.
struct BalancePoints {
  std::vector<double> x, y, low, high;
  std::vector<bool> straggler;
};

BalancePoints balance_points(const analyze::Analysis& a, const std::vector<double>& below,
                             PageText& page) {
  BalancePoints p;
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    const auto& g = a.gpus[i];
    if (!g.activity) {
      page.notes.push_back(fmt::format("{}: no activity samples in the window", gpu_label(a, i)));
      continue;
    }
    p.x.push_back(static_cast<double>(i + 1));
    p.y.push_back(*g.activity * 100);
    double p5 = p.y.back(), p95 = p.y.back();
    if (const auto m = metric_by_name(g.activity_metric)) {
      if (const auto& s = g.over_time[static_cast<std::size_t>(*m)]) {
        p5 = s->p5;
        p95 = s->p95;
      }
    }
    p.low.push_back(p5);
    p.high.push_back(p95);
    p.straggler.push_back(!std::isnan(below[i]));
  }
  return p;
}

// Names the worst stragglers beside their points (and all of them in the notes).
void name_stragglers(const analyze::Analysis& a, const PlotStream& stream, double n, double w,
                     PageText& page) {
  if (!a.balance) return;
  text_size(stream, 13);
  set_colour(Colour::Straggler);
  std::size_t named = 0;
  for (const auto& s : a.balance->stragglers) {
    if (named == kMaxNamedStragglers) break;
    if (s.index >= a.gpus.size() || !a.gpus[s.index].activity) continue;
    const double sx = static_cast<double>(s.index + 1);
    const double sy = *a.gpus[s.index].activity * 100;
    const bool right_side = sx < n * 0.75;
    const double dx = (n + 0.2) * 12.0 / w * 1.0;
    plptex(right_side ? sx + dx : sx - dx, sy, 1, 0, right_side ? 0.0 : 1.0,
           fmt::format("{} −{:.0f} %", gpu_label(a, s.index), s.below_median * 100).c_str());
    ++named;
    page.notes.push_back(fmt::format("straggler {}: {:.0f} % below the median",
                                     gpu_label(a, s.index), s.below_median * 100));
  }
  if (a.balance->stragglers.size() > named) {
    page.notes.push_back(
        fmt::format("{} more stragglers not named", a.balance->stragglers.size() - named));
  }
}

}  // namespace

PageText draw_load_balance_page(const analyze::Analysis& a, const PlotStream& stream) {
  PageText page{"Load balance: time-averaged activity per GPU", {}};
  pladv(0);
  const double h = stream.height();
  const double w = stream.width();

  // Which GPUs straggle, and by how much.
  std::vector<double> below(a.gpus.size(), std::nan(""));
  if (a.balance) {
    for (const auto& s : a.balance->stragglers) {
      if (s.index < below.size()) below[s.index] = s.below_median;
    }
  }
  std::string metric_name = "activity";
  for (const auto& g : a.gpus) {
    if (g.activity) {
      metric_name = activity_name(g.activity_metric, g.key.vendor);
      break;
    }
  }
  std::string subtitle = fmt::format(
      "activity = {} averaged over the statistics window · error bars: p5–p95 of the "
      "samples",
      metric_name);
  if (a.balance) {
    subtitle += fmt::format(" · max/mean {:.2f} · CV {:.2f} · {} straggler{} (red)",
                            a.balance->max_over_mean, a.balance->cv, a.balance->stragglers.size(),
                            a.balance->stragglers.size() == 1 ? "" : "s");
  }
  draw_header(a, stream, page.title, subtitle);

  const BalancePoints points = balance_points(a, below, page);
  const auto& [x, y, low, high, straggler] = points;

  const bool named_axis = a.gpus.size() <= kMaxAxisLabels;
  const double bottom_px = named_axis ? 190 : 80;
  plvpor(0.07, 0.98, bottom_px / h, 1.0 - 110.0 / h);
  const double n = static_cast<double>(std::max<std::size_t>(a.gpus.size(), 1));
  plwind(0.4, n + 0.6, 0, 105);
  text_size(stream, 15);
  if (x.empty()) {
    set_colour(Colour::Ink);
    plbox("bc", 0, 0, "bc", 0, 0);
    const std::string message = a.gpus.empty() ? "no samples" : "no activity samples in the window";
    centred_message(message);
    page.notes.push_back(message);
    return page;
  }
  set_colour(Colour::Grid);
  plbox("", 0, 0, "g", 0, 0);
  set_colour(Colour::Ink);
  plwidth(1.2);
  plbox(named_axis ? "bc" : "bcnst", 0, 0, "bcnstv", 0, 0);
  plwidth(1.0);
  plmtex("l", 3.6, 0.5, 0.5, fmt::format("{} (%)", metric_name).c_str());
  if (named_axis) {
    text_size(stream, a.gpus.size() > 16 ? 12 : 14);
    for (std::size_t i = 0; i < a.gpus.size(); ++i) {
      set_colour(!std::isnan(below[i]) ? Colour::Straggler : Colour::Ink);
      const double pos = (static_cast<double>(i + 1) - 0.4) / (n + 0.2);
      plmtex("bv", 0.8, pos, 1.0, gpu_label(a, i).c_str());
    }
    text_size(stream, 15);
  } else {
    plmtex("b", 2.6, 0.5, 0.5, "GPU (position in the analysis)");
  }

  if (a.balance) {
    const std::array<PLFLT, 2> xs = {0.4, n + 0.6};
    const std::array<PLFLT, 2> ys = {a.balance->median * 100, a.balance->median * 100};
    set_colour(Colour::Muted);
    pllsty(2);
    plwidth(1.5);
    plline(2, xs.data(), ys.data());
    pllsty(1);
    plptex(n + 0.55, a.balance->median * 100 + 1.5, 1, 0, 1.0,
           fmt::format("median {:.1f} %", a.balance->median * 100).c_str());
  } else if (a.gpus.size() < 2) {
    page.notes.push_back("load balance needs at least two GPUs");
  }

  // Error bars and points, stragglers last so they stay on top.
  const double point_px = a.gpus.size() > 64 ? 8 : 14;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t k = 0; k < x.size(); ++k) {
      if (straggler[k] != (pass == 1)) continue;
      set_colour(straggler[k] ? Colour::Straggler : series_colour(0));
      plwidth(2.0);
      plerry(1, &x[k], &low[k], &high[k]);
      text_size(stream, point_px);
      plstring(1, &x[k], &y[k], "●");
      text_size(stream, 15);
    }
  }
  plwidth(1.0);

  name_stragglers(a, stream, n, w, page);
  set_colour(Colour::Ink);
  return page;
}

}  // namespace gpuscope::report::plots
