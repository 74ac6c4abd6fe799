// nvidia-smi --query-gpu logs without a GPU column, as real loggers write them under load
// (docs/logs.md, "How the GPUs of a log without a GPU column are told"): nvidia-smi queries every
// GPU in index order once per tick and then sleeps for the interval. Measured on real logs at
// -lms 100: the gaps inside a tick are mostly 1-4 ms, but a few in a hundred stretch to 5-60 ms;
// in 8-GPU logs some rows of a tick share a millisecond; the gaps between ticks are 100-105 ms.
// The distribution is continuous: no "widest step" separates the two kinds of gap.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gpuscope::testing {

struct JitterShape {
  unsigned gpus = 2;
  unsigned ticks = 200;
  std::uint32_t seed = 1;
  double interval_ms = 100;  // the sleep between ticks (nvidia-smi -lms)
  double stretched = 0.05;   // share of inner gaps stretched to 5-60 ms
  double same_ms = 0.1;      // share of inner gaps of 0 ms
  double inner_min_ms = 1, inner_max_ms = 4;
  bool cadence = false;     // ticks start every interval (a logger that keeps time)
  bool distinct = false;    // the GPUs differ in temperature and memory used
  unsigned drop_after = 0;  // drop the row of GPU 1 in this tick (0: none)
  unsigned stall_at = 0;    // GPU 1's row of this tick comes 150 ms late (0: none)
};

// One generated log: its text and, for each data row in order, the GPU it belongs to.
struct JitteredLog {
  std::string text;
  std::vector<unsigned> gpu_of_row;
  std::vector<double> power_of_row;
};

inline JitteredLog jittered_log(const JitterShape& s) {
  std::mt19937 rng(s.seed);
  std::uniform_real_distribution<double> unit(0, 1);
  const auto inner_gap = [&] {
    const double u = unit(rng);
    if (u < s.same_ms) return 0.0;
    if (u < s.same_ms + s.stretched) return 5 + 55 * unit(rng);
    return s.inner_min_ms + (s.inner_max_ms - s.inner_min_ms) * unit(rng);
  };
  JitteredLog log;
  log.text = "timestamp, name, temperature.gpu, memory.used [MiB], power.draw [W]\n";
  // 2026-11-25 10:00:00.000 local (UTC in the tests), as milliseconds of the day.
  double now_ms = 10 * 3600 * 1000.0;
  double tick_start = now_ms;
  for (unsigned tick = 0; tick < s.ticks; ++tick) {
    for (unsigned g = 0; g < s.gpus; ++g) {
      if (g > 0) now_ms += s.stall_at != 0 && tick == s.stall_at && g == 1 ? 150 : inner_gap();
      if (s.drop_after != 0 && tick == s.drop_after && g == 1 && s.gpus > 1) continue;
      const auto ms = static_cast<std::int64_t>(now_ms);
      const double temperature = s.distinct ? 40 + 3 * g : 45;
      const double memory = s.distinct ? 1000.0 * (g + 1) : 8000;
      const double power = 100 + 10 * g + 0.01 * (tick % 50);
      log.text += fmt::format(
          "2026/11/25 {:02d}:{:02d}:{:02d}.{:03d}, NVIDIA H100 80GB HBM3, {:.0f}, {:.0f} MiB, "
          "{:.2f} W\n",
          ms / 3'600'000, ms / 60'000 % 60, ms / 1000 % 60, ms % 1000, temperature, memory, power);
      log.gpu_of_row.push_back(g);
      log.power_of_row.push_back(power);
    }
    if (s.cadence) {
      tick_start += s.interval_ms;
      now_ms = std::max(now_ms + 1, tick_start + unit(rng) * 3);
    } else {
      now_ms += s.interval_ms + 5 * unit(rng);
    }
  }
  return log;
}

}  // namespace gpuscope::testing
