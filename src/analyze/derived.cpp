#include "analyze/derived.hpp"

#include <cmath>
#include <limits>

namespace gpuscope::analyze {

void derive_metrics(DeviceSeries& series) {
  const std::size_t n = series.t_s.size();
  std::vector<double>& flop = series.values[static_cast<std::size_t>(Metric::FlopActivePct)];
  flop.clear();
  const Metric parts[] = {Metric::Fp64ActivePct, Metric::Fp32ActivePct, Metric::Fp16ActivePct,
                          Metric::TensorActivePct};
  for (Metric m : parts) {
    if (series.of(m).size() < n) return;  // a part never recorded: no FLOP activity at all
  }
  flop.assign(n, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (Metric m : parts) sum += series.of(m)[i];
    flop[i] = sum;  // NaN when any part is NaN
  }
}

}  // namespace gpuscope::analyze
