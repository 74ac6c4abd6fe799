// Foreign values checked against what each metric can physically be (core/metric_ranges.hpp)
// before they are written: a value outside its range, NaN or infinite (-300 W, 1e308 W,
// 900,000 %) is left out of its row (NULL, as a value the source lacked) and counted, and the
// run says, per metric, how many and the first one, where it was. Every reader that writes a
// foreign SampleRow goes through one (docs/logs.md, docs/jobs.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "core/run.hpp"

namespace gpuscope::ingest {

class ValueScreen {
 public:
  // Leaves out of `row` every present value that cannot be a measurement of its metric; the
  // first of each metric is remembered with `line` (its line in the file; 0: none, the row's
  // time names it) and the row's GPU. Returns how many values were left out.
  unsigned screen(SampleRow& row, std::int64_t line = 0);

  // Whether any value was left out.
  bool any() const { return total_ != 0; }
  std::int64_t total() const { return total_; }

  // One sentence per metric with values left out, "power_w: 3 values outside 0 to 5,000 W
  // (impossible for it) left out, e.g. -300 at line 12 (GPU 0)", each after `prefix`.
  std::vector<std::string> said(const std::string& prefix) const;

 private:
  struct Refused {
    std::int64_t count = 0;
    double first = 0;
    std::int64_t line = 0;
    std::int64_t wall_ns = 0;
    unsigned device = 0;
  };
  std::array<Refused, kMetricCount> refused_{};
  std::int64_t total_ = 0;
};

}  // namespace gpuscope::ingest
