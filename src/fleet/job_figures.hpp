// A job's figures from what the server summarised of its GPUs: per GPU its means, peak memory,
// energy (the counter's rise, else mean power × time), idle share and score, and for the job the
// GPU-hours, idle GPU-hours, CO2 and flags (docs/fleet.md, "What each figure means"). Pure:
// the same aggregates give the same row, whichever command asked.
#pragma once

#include <vector>

#include "core/site_job.hpp"
#include "fleet/gpu_aggregates.hpp"

namespace gpuscope::fleet {

struct FigureOptions {
  double g_per_kwh = 475;  // the grid's intensity (analyze's default: the world's average)
  double pue = 1;
  double idle_share = 0.5;               // a GPU idle this share of its samples flags the job
  double straggler_threshold = 0.15;     // below the job's median GPU by more than this (relative)
  double too_large_memory_share = 0.25;  // peak memory at most this share of the GPU's
  double too_large_activity_pct = 25;    // and mean activity at most this
};

// Fills `job`'s figures, flags and GPU rows from its GPUs' aggregates (none: figures stay absent,
// source None). `job` holds sacct's fields (start, end, allocated GPUs).
void fill_figures(SiteJob& job, std::vector<GpuAggregate> gpus, const FigureOptions& options);

}  // namespace gpuscope::fleet
