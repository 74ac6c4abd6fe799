// One cycle of guard (docs/guard.md, "A cycle"): squeue's running GPU jobs, their GPUs since the
// last cycle from the monitoring server (many jobs per query), the verdicts, the circuit
// breaker, the steps, and what to remember saved in one transaction; then the nodes with a
// broken GPU, drained; and once a day the admins' digest.
#pragma once

#include <cstdint>

#include "app/guard/guard_steps.hpp"
#include "tsdb/source.hpp"

namespace gpuscope::app {

// Runs one cycle at `now_ms`: the jobs, then the nodes' health and the drains
// (guard_drains.hpp). Throws Error when squeue or the server fails in the jobs' part (nothing is
// acted on and nothing remembered then); a failure of the health part is said and counted in
// the tally's `failed`, the jobs' part kept.
CycleTally run_cycle(GuardContext& c, tsdb::Source& source, std::int64_t now_ms);

}  // namespace gpuscope::app
