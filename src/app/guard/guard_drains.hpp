// guard's drains (docs/guard.md, "Broken GPUs"): each cycle reads the nodes from sinfo and every
// GPU's health since the last cycle from the monitoring server, finds the nodes with a broken
// GPU (guard/node_health), and drains those the rules allow (`scontrol update NodeName=N
// State=DRAIN Reason="gpuscope: ..."`), telling the admins; a node held back by the partition
// share is told to them once a day and tried again the next cycle. A cycle that would drain more
// than max_drains_per_cycle drains none (the circuit breaker) and says so.
#pragma once

#include <cstdint>

#include "app/guard/guard_steps.hpp"
#include "tsdb/source.hpp"

namespace gpuscope::app {

// Runs the health part of a cycle at `now_ms`. Throws Error when sinfo or the server fails
// (nothing is drained then, and the next cycle reads the same window again).
void drain_cycle(GuardContext& c, tsdb::Source& source, std::int64_t now_ms, CycleTally& tally);

}  // namespace gpuscope::app
