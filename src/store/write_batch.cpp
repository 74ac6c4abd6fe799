#include "store/write_batch.hpp"

#include <algorithm>
#include <iterator>

namespace gpuscope::store {
namespace {

template <typename T>
void move_append(std::vector<T>& to, std::vector<T>& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  from.clear();
}

// Removes ceil(share × size) rows from the front of `rows`; returns how many.
template <typename T>
std::int64_t drop_front(std::vector<T>& rows, double share) {
  auto n = static_cast<std::size_t>(static_cast<double>(rows.size()) * share + 0.999999);
  n = std::min(n, rows.size());
  rows.erase(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n));
  return static_cast<std::int64_t>(n);
}

}  // namespace

RowCounts WriteBatch::counts() const {
  return {static_cast<std::int64_t>(samples.size()),
          static_cast<std::int64_t>(power_samples.size()), static_cast<std::int64_t>(events.size()),
          static_cast<std::int64_t>(output.size())};
}

std::size_t WriteBatch::bytes() const {
  std::size_t total = samples.size() * sizeof(SampleRow) + power_samples.size() * sizeof(PowerRow);
  for (const auto& e : events) total += sizeof(Event) + e.kind.capacity() + e.detail.capacity();
  for (const auto& o : output) total += sizeof(OutputLine) + o.text.capacity();
  return total;
}

void WriteBatch::clear() {
  samples.clear();
  power_samples.clear();
  events.clear();
  output.clear();
}

void WriteBatch::append(WriteBatch& newer) {
  move_append(samples, newer.samples);
  move_append(power_samples, newer.power_samples);
  move_append(events, newer.events);
  move_append(output, newer.output);
}

RowCounts WriteBatch::drop_oldest(std::size_t max_bytes) {
  const std::size_t total = bytes();
  if (total <= max_bytes) return {};
  const double share = static_cast<double>(total - max_bytes) / static_cast<double>(total);
  RowCounts dropped;
  dropped.samples = drop_front(samples, share);
  dropped.power_samples = drop_front(power_samples, share);
  dropped.events = drop_front(events, share);
  dropped.output_lines = drop_front(output, share);
  return dropped;
}

}  // namespace gpuscope::store
