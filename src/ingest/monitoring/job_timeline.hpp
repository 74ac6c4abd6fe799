// One GPU's series turned into sample rows: the pieces of an exporter restart joined, each value
// converted to the catalog's unit, metrics of one scrape merged into one row, and what is odd
// (restarts, counter resets, gaps, duplicates, percent sent for a ratio) said once. Nothing is
// interpolated: a gap stays a gap, a counter reset is passed through to the analysis.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/metrics.hpp"
#include "core/run.hpp"
#include "ingest/monitoring/job_series.hpp"
#include "tsdb/series.hpp"

namespace gpuscope::ingest {

// One converted value.
struct Reading {
  std::int64_t t_ms = 0;
  Metric metric = Metric::PowerW;
  double value = 0;
};

struct GpuTimeline {
  std::vector<SampleRow> rows;  // in time order; wall_ns set, device_index and mono_ns not
  std::optional<double> memory_total_bytes;
  std::bitset<kMetricCount> metrics;  // present in some row
};

// The median spacing of consecutive samples over all `series`, in ms; 0 when no series has
// two samples.
double median_spacing_ms(const std::vector<tsdb::Series>& series);

// Whether `t_ms` lies in one of `spans` widened by `slack_ms` (no spans: always).
bool within(const std::vector<Span>& spans, std::int64_t t_ms, double slack_ms);

// The raw series of `gpu` (already its own) as rows; `interval_ms` is the scrape interval.
GpuTimeline raw_timeline(const JobGpu& gpu, const std::vector<tsdb::Series>& series,
                         double interval_ms, Notes& notes);

// Readings as rows: readings less than half an interval after a row's first one join it (a
// metric at most once per row).
std::vector<SampleRow> group_rows(std::vector<Reading> readings, double interval_ms);

// Spans without samples longer than 2.5 intervals, said once for the GPU's node.
void say_gaps(const JobGpu& gpu, const std::vector<SampleRow>& rows, double interval_ms,
              Notes& notes);

// "2024-05-02T12:02:11Z"
std::string utc_text(std::int64_t t_ms);
// "15 s", "6 min 40 s", "2 h 5 min", "3.5 days"
std::string duration_text(double seconds);

}  // namespace gpuscope::ingest
