#include "kernels/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::kernels {
namespace {

template <typename Row>
void sort_by_total(std::vector<Row>& rows, std::string Row::*key) {
  std::sort(rows.begin(), rows.end(), [key](const Row& a, const Row& b) {
    if (a.stats.total_ns != b.stats.total_ns) return a.stats.total_ns > b.stats.total_ns;
    return a.*key < b.*key;
  });
}

template <typename Row>
void fill_percent(std::vector<Row>& rows) {
  std::int64_t all = 0;
  for (const Row& row : rows) all += row.stats.total_ns;
  for (Row& row : rows) {
    row.time_percent =
        all > 0 ? 100.0 * static_cast<double>(row.stats.total_ns) / static_cast<double>(all) : 0.0;
  }
}

}  // namespace

DurationStats summarize(std::vector<std::int64_t> durations) {
  DurationStats s;
  if (durations.empty()) return s;
  std::sort(durations.begin(), durations.end());
  const std::size_t n = durations.size();
  s.count = static_cast<std::int64_t>(n);
  for (std::int64_t d : durations) s.total_ns += d;
  s.min_ns = durations.front();
  s.max_ns = durations.back();
  s.avg_ns = static_cast<double>(s.total_ns) / static_cast<double>(n);
  s.median_ns =
      n % 2 == 1
          ? static_cast<double>(durations[n / 2])
          : (static_cast<double>(durations[n / 2 - 1]) + static_cast<double>(durations[n / 2])) /
                2.0;
  if (n > 1) {
    double squares = 0;
    for (std::int64_t d : durations) {
      const double delta = static_cast<double>(d) - s.avg_ns;
      squares += delta * delta;
    }
    s.stddev_ns = std::sqrt(squares / static_cast<double>(n - 1));
  }
  return s;
}

std::vector<KernelRow> kernel_summary(const KernelDurations& kernels) {
  std::vector<KernelRow> rows;
  rows.reserve(kernels.size());
  for (const auto& [name, durations] : kernels) {
    if (durations.empty()) continue;
    rows.push_back({name, 0.0, summarize(durations)});
  }
  fill_percent(rows);
  sort_by_total(rows, &KernelRow::name);
  return rows;
}

std::vector<MemoryRow> memory_summary(const MemoryOps& ops) {
  std::vector<MemoryRow> rows;
  rows.reserve(ops.size());
  for (const auto& [operation, list] : ops) {
    if (list.empty()) continue;
    std::vector<std::int64_t> durations;
    durations.reserve(list.size());
    std::int64_t bytes = 0;
    for (const MemoryOp& op : list) {
      durations.push_back(op.duration_ns);
      bytes += op.bytes;
    }
    rows.push_back({operation, 0.0, summarize(std::move(durations)), bytes});
  }
  fill_percent(rows);
  sort_by_total(rows, &MemoryRow::operation);
  return rows;
}

void append(KernelDurations& into, const KernelDurations& from) {
  for (const auto& [name, durations] : from) {
    auto& target = into[name];
    target.insert(target.end(), durations.begin(), durations.end());
  }
}

void append(MemoryOps& into, const MemoryOps& from) {
  for (const auto& [operation, list] : from) {
    auto& target = into[operation];
    target.insert(target.end(), list.begin(), list.end());
  }
}

std::string memcpy_operation(long long copy_kind) {
  // CUpti_ActivityMemcpyKind, with the labels of nsys's ENUM_CUDA_MEMCPY_OPER.
  static const std::map<long long, const char*> kLabels = {
      {1, "Host-to-Device"},  {2, "Device-to-Host"},   {3, "Host-to-Array"},
      {4, "Array-to-Host"},   {5, "Array-to-Array"},   {6, "Array-to-Device"},
      {7, "Device-to-Array"}, {8, "Device-to-Device"}, {9, "Host-to-Host"},
      {10, "Peer-to-Peer"}};
  const auto it = kLabels.find(copy_kind);
  if (it == kLabels.end()) return fmt::format("[CUDA memcpy kind {}]", copy_kind);
  return fmt::format("[CUDA memcpy {}]", it->second);
}

}  // namespace gpuscope::kernels
