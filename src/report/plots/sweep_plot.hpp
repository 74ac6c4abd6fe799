// The plot of a power-limit or SM-clock sweep: energy, time, throughput and energy per unit of
// work against the setting, with each setting's min–max spread, every trial as a dot (outliers
// as red crosses) and the recommended settings marked (docs/sweep.md).
#pragma once

#include <filesystem>

#include "core/sweep.hpp"

namespace gpuscope::report::plots {

// Writes the plot as a PNG of `width` × `height` pixels, under a temporary name renamed when
// complete. Throws Error when it cannot be written or PLplot lacks the cairo driver.
void write_sweep_plot(const sweep::SweepRecord& record, const std::filesystem::path& png,
                      int width = 1600, int height = 1000);

}  // namespace gpuscope::report::plots
