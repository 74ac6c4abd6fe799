// Prometheus text exposition (format 0.0.4) of the latest values, and the same series as
// timestamped lines for VictoriaMetrics' /api/v1/import/prometheus.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "exporter/gpu_identity.hpp"
#include "exporter/latest_values.hpp"
#include "exporter/metric_names.hpp"

namespace gpuscope::exporter {

class Exposition {
 public:
  Exposition(Naming naming, ExportLabels labels, const std::vector<GpuIdentity>& gpus);

  // The whole /metrics page: HELP and TYPE once per metric, one line per GPU that has a value.
  std::string render(const Snapshot& snapshot) const;

  // One line per present metric of `row`: `name{labels} value timestamp_ms\n`, appended to `out`.
  // Returns the number of lines (none with jobstats naming: pushes use gpuscope's names).
  std::size_t append_lines(const SampleRow& row, std::string& out) const;
  // The same for a fast-cadence power row (power and energy only).
  std::size_t append_lines(const PowerRow& row, std::string& out) const;
  // The same for a health row: its values under the health families' names (Xids are events and
  // are not pushed).
  std::size_t append_lines(const HealthRow& row, std::string& out) const;

  Naming naming() const { return naming_; }

  // Adds, per GPU, the labels of the workload now using it (export/process_exposition.hpp) to
  // every series of that GPU; GPUs not in `labels` go back to their own labels. With jobstats
  // naming, `labels` are its jobid and userid.
  void set_workload(
      const std::map<unsigned, std::vector<std::pair<std::string, std::string>>>& labels);
  // A GPU's own labels without the braces (`gpu="0",uuid="…",hostname="…"`); empty when it is
  // not exported, and with jobstats naming (its exporter has no per-process series).
  std::string label_body(unsigned device_index) const;

 private:
  const std::string* labels_of(unsigned device_index) const;
  // The health families of every GPU (docs/live.md, "GPU health"), after the catalog's.
  void render_health(const Snapshot& snapshot, std::string& out) const;
  void append_value(std::string& out, std::string_view name, const std::string& labels,
                    double value) const;

  Naming naming_;
  ExportLabels common_;
  // Jobstats naming renders its own shape (export/jobstats_exposition.hpp) from these.
  std::vector<GpuIdentity> jobstats_gpus_;
  std::map<unsigned, std::vector<std::pair<std::string, std::string>>> jobstats_workload_;
  std::vector<unsigned> indices_;
  std::vector<std::string> gpu_labels_;   // `{gpu="0",uuid="...",hostname="..."}` per GPU
  std::vector<std::string> base_labels_;  // the same without the workload and the closing brace
  std::vector<std::string> info_labels_;
  std::array<std::optional<ExportedMetric>, kMetricCount> metrics_;
};

// Escapes a label value for the text format (backslash, double quote, newline).
std::string escape_label_value(const std::string& value);

// A sample value as the text format writes it: shortest exact decimal, NaN, +Inf, -Inf.
std::string format_value(double value);

}  // namespace gpuscope::exporter
