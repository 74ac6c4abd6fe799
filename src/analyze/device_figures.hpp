// One GPU's figures in pass 2 of the analysis (Analyzer::prepare_device, on any thread): its
// samples inside the window, its statistics over time with its part of those over all GPUs and
// over space, its activity and efficiency score, its energy, and a MIG GPU's bins for the split
// of its energy.
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "analyze/analyzer.hpp"

namespace gpuscope::analyze {

// The samples of one GPU inside the analysis window: [first, last] when any.
struct WindowSpan {
  bool any = false;
  std::size_t first = 0, last = 0;
};
WindowSpan window_span(std::span<const double> t_s, const Window& w);

// A stretch of consecutive samples in one over-space bin (space_count: outside the grid);
// samples before the run's start (t < 0) belong to none.
struct BinStretch {
  std::size_t bin = 0, begin = 0, end = 0;
};

// The samples' stretches, computed once per GPU for every metric.
void bin_stretches(std::span<const double> t_s, double bin_s, std::size_t space_count,
                   std::vector<BinStretch>& out);

// Over time (this GPU), over both (all GPUs) and over space (grid bins), for every summarised
// metric.
void summarise_metrics(const DeviceSeries& d, const WindowSpan& w,
                       std::span<const BinStretch> stretches, std::size_t space_count,
                       PreparedDevice& out, std::vector<double>& sorted);

// Activity (SM active, else GPU utilisation) and the efficiency score inside the window.
void activity_and_score(const DeviceSeries& d, const WindowSpan& w, PreparedDevice& out,
                        std::vector<double>& sorted);

// Energy over the whole run: the counter, power integrated as a cross-check, peaks, throttling;
// with a grid series' slot edges, the counter's energy in each slot.
void device_energy(const DeviceSeries& d, const WindowSpan& w, std::span<const double> slot_edges_s,
                   GpuEnergy& e);

// A MIG GPU's bins for the split of its energy (analyze/mig_share): a parent's energy from the
// readings device_energy uses, an instance's activity (SM active, else graphics active).
MigBins mig_bins_of(const DeviceSeries& d, double bin_s, std::size_t bins);

}  // namespace gpuscope::analyze
