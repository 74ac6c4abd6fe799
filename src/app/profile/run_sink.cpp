#include "app/profile/run_sink.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "core/clock.hpp"
#include "core/event_kinds.hpp"

namespace gpuscope::app {

RunSink::RunSink(store::RunWriter& writer, std::size_t device_count, bool verbose,
                 std::int64_t start_mono_ns)
    : writer_(writer),
      verbose_(verbose),
      start_mono_ns_(start_mono_ns),
      latest_power_w_(device_count, 0.0) {}

void RunSink::on_sample(const SampleRow& row) {
  writer_.push(row);
  samples_.fetch_add(1, std::memory_order_relaxed);
  if (auto power = row.get(Metric::PowerW)) {
    std::lock_guard lock(mutex_);
    if (row.device_index >= latest_power_w_.size()) latest_power_w_.resize(row.device_index + 1);
    latest_power_w_[row.device_index] = *power;
  }
  if (verbose_) fmt::print(stderr, "{}\n", format_sample(row, start_mono_ns_));
}

void RunSink::on_power(const PowerRow& row) {
  writer_.push(row);
}

void RunSink::on_event(const Event& event) {
  writer_.push(event);
  // Events worth a person's attention right away; the rest is in the database.
  if (event.kind == EventKind::GpuLost || event.kind == EventKind::Gap ||
      event.kind == EventKind::MigInstance || verbose_) {
    fmt::print(stderr, "gpuscope: {}\n", event.detail);
  } else if (event.kind == EventKind::Xid ||
             // The driver's ECC and remap events are said again by the counters, with counts.
             (!event.detail.starts_with("the driver ") &&
              (event.kind == EventKind::RowRemap ||
               (event.kind == EventKind::Ecc &&
                event.detail.find("uncorrected") != std::string::npos)))) {
    // A fault on the GPU: the first answer to "my code or the hardware?".
    fmt::print(stderr, "gpuscope: GPU {}: {}\n", event.device_index.value_or(0), event.detail);
  }
}

void RunSink::on_health(const HealthRow& row) {
  writer_.push(row);
}

double RunSink::total_power_w() const {
  std::lock_guard lock(mutex_);
  double total = 0;
  for (double w : latest_power_w_) total += w;
  return total;
}

std::string format_sample(const SampleRow& row, std::int64_t start_mono_ns) {
  std::string line =
      fmt::format("{:8.3f} s GPU {}", seconds(row.mono_ns - start_mono_ns), row.device_index);
  for (const auto& metric : kMetrics) {
    auto value = row.get(metric.id);
    if (!value) continue;
    if (metric.kind == MetricKind::Bitmask) {
      line += fmt::format("  {} {:#x}", metric.name, static_cast<std::uint64_t>(*value));
    } else if (metric.storage == MetricStorage::Integer) {
      line += fmt::format("  {} {:.0f}", metric.name, *value);
    } else {
      line += fmt::format("  {} {:.1f}", metric.name, *value);
    }
  }
  return line;
}

}  // namespace gpuscope::app
