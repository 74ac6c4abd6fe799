#include "report/space_view.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/analysis_view.hpp"

namespace gpuscope::report {

using analyze::Analysis;
using nlohmann::json;

std::string space_text(const Analysis& a, const std::vector<Metric>& metrics, const Style& style) {
  const bool hosts = several_hosts(a);
  std::string out;
  for (Metric m : metrics) {
    const auto& series = a.over_space[static_cast<std::size_t>(m)];
    out += "\n" +
           style.bold(fmt::format("{} across GPUs over time ({})", info(m).name, unit_of(m))) +
           "\n";
    if (series.empty()) {
      out += "  not supported on these GPUs\n";
      continue;
    }
    // At most 30 rows on a terminal: neighbouring grid points are merged (CSV has them all).
    const std::size_t step = (series.size() + 29) / 30;
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < series.size(); i += step) {
      double sum = 0, lo = series[i].min, hi = series[i].max;
      std::size_t lo_gpu = series[i].min_gpu, hi_gpu = series[i].max_gpu, n = 0;
      for (std::size_t k = i; k < std::min(series.size(), i + step); ++k, ++n) {
        sum += series[k].mean;
        if (series[k].min < lo) {
          lo = series[k].min;
          lo_gpu = series[k].min_gpu;
        }
        if (series[k].max > hi) {
          hi = series[k].max;
          hi_gpu = series[k].max_gpu;
        }
      }
      rows.push_back({fmt::format("{:.1f}", series[i].t_s),
                      format_value(m, sum / static_cast<double>(n)), format_value(m, lo),
                      a.gpus[lo_gpu].key.label(hosts), format_value(m, hi),
                      a.gpus[hi_gpu].key.label(hosts)});
    }
    out += table({"t (s)", "mean", "min", "min GPU", "max", "max GPU"}, rows, style);
  }
  return out;
}

json space_json(const Analysis& a) {
  json over_space = json::object();
  for (const auto& m : kMetrics) {
    const auto& series = a.over_space[static_cast<std::size_t>(m.id)];
    if (!analyze::summarised(m.id) || series.empty()) continue;
    json t = json::array(), mean = json::array(), lo = json::array(), hi = json::array(),
         lo_gpu = json::array(), hi_gpu = json::array();
    for (const auto& p : series) {
      t.push_back(p.t_s);
      mean.push_back(p.mean);
      lo.push_back(p.min);
      hi.push_back(p.max);
      lo_gpu.push_back(p.min_gpu);
      hi_gpu.push_back(p.max_gpu);
    }
    over_space[std::string(m.name)] = {{"t_s", t},  {"mean", mean},      {"min", lo},
                                       {"max", hi}, {"min_gpu", lo_gpu}, {"max_gpu", hi_gpu}};
  }
  return over_space;
}

std::string space_csv(const Analysis& a, const std::vector<Metric>& metrics) {
  auto num = [](double v) { return fmt::format("{}", v); };
  std::string out = "metric,unit,t_s,gpus,mean,min,min_gpu,max,max_gpu\n";
  for (Metric m : metrics) {
    for (const auto& p : a.over_space[static_cast<std::size_t>(m)]) {
      out += fmt::format("{},{},{},{},{},{},{},{},{}\n", info(m).name, info(m).unit, num(p.t_s),
                         p.gpus, num(p.mean), num(p.min), p.min_gpu, num(p.max), p.max_gpu);
    }
  }
  return out;
}

}  // namespace gpuscope::report
