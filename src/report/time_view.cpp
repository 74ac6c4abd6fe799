#include "report/time_view.hpp"

#include <fmt/format.h>

#include "report/analysis_view.hpp"

namespace gpuscope::report {

using analyze::Analysis;
using nlohmann::json;

std::string time_text(const Analysis& a, const std::vector<Metric>& metrics, const Style& style) {
  const bool hosts = several_hosts(a);
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : a.gpus) {
    for (Metric m : metrics) {
      const auto& s = g.over_time[static_cast<std::size_t>(m)];
      if (!s) {
        rows.push_back({g.key.label(hosts), std::string(info(m).name), unit_of(m), "not supported",
                        "", "", "", ""});
        continue;
      }
      rows.push_back({g.key.label(hosts), std::string(info(m).name), unit_of(m),
                      format_value(m, s->mean), format_value(m, s->median), format_value(m, s->p5),
                      format_value(m, s->p95), format_value(m, s->max)});
    }
  }
  return "\n" + style.bold("Per GPU over time") + "\n" +
         table({"GPU", "metric", "unit", "mean", "median", "p5", "p95", "max"}, rows, style);
}

std::string time_csv(const Analysis& a, const std::vector<Metric>& metrics) {
  auto num = [](double v) { return fmt::format("{}", v); };
  std::string out = "run,host,rank,gpu,uuid,metric,unit,count,mean,median,p5,p95,min,max\n";
  for (const auto& g : a.gpus) {
    for (Metric m : metrics) {
      const auto& s = g.over_time[static_cast<std::size_t>(m)];
      out += fmt::format("{},{},{},{},{},{},{},", g.key.run_id, g.key.host,
                         g.key.rank ? std::to_string(*g.key.rank) : "", g.key.device_index,
                         g.key.uuid, info(m).name, info(m).unit);
      out += s ? fmt::format("{},{},{},{},{},{},{}\n", s->count, num(s->mean), num(s->median),
                             num(s->p5), num(s->p95), num(s->min), num(s->max))
               : "0,,,,,,\n";
    }
  }
  return out;
}

}  // namespace gpuscope::report
