// A power-limit (or SM-clock) sweep as HTML: one section with what was swept, the four
// recommendations with their change against the default, the per-setting table with the spread
// over the repeats, the plot (energy, time, throughput and energy per unit against the setting)
// and every trial. The same section is the body of the sweep's standalone page (<stem>.html)
// and a section of `gpuscope report` for a sweep database (docs/sweep.md, docs/report.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/sweep.hpp"

namespace gpuscope::report {

// "500 W", "unlocked" (a clock sweep's baseline), "700 W (default)" with `mark_baseline`.
std::string sweep_setting_label(const sweep::SweepRecord& record, double value, bool baseline,
                                bool mark_baseline = false);

// <section id="ID" class="sweep">…</section>. `png` is the plot's PNG (embedded as a data: URL;
// empty: no plot, said so).
std::string sweep_section_html(const sweep::SweepRecord& record, std::span<const std::uint8_t> png,
                               const std::string& id = "sweep");

// The standalone, self-contained page: the section with a title and a style of its own.
std::string sweep_page_html(const sweep::SweepRecord& record, std::span<const std::uint8_t> png);

}  // namespace gpuscope::report
