#include "ingest/log_ticks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

namespace gpuscope::ingest {
namespace {

// The median of `values` (not empty), which it reorders.
std::int64_t median(std::vector<std::int64_t>& values) {
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

// The rows-per-tick counts of the ticks `wall_ns` holds when a gap longer than `boundary`
// starts a tick; the last tick (perhaps cut short by the look-ahead) left out.
std::map<std::size_t, std::size_t> tick_sizes(std::span<const std::int64_t> wall_ns,
                                              std::int64_t boundary) {
  std::map<std::size_t, std::size_t> sizes;
  std::size_t rows = 1;
  for (std::size_t i = 1; i < wall_ns.size(); ++i) {
    if (wall_ns[i] - wall_ns[i - 1] > boundary) {
      ++sizes[rows];
      rows = 0;
    }
    ++rows;
  }
  return sizes;
}

std::string sizes_text(const std::map<std::size_t, std::size_t>& sizes) {
  std::string out;
  for (const auto& [rows, ticks] : sizes) {
    out += fmt::format("{}{} tick{} of {} row{}", out.empty() ? "" : ", ", ticks,
                       ticks == 1 ? "" : "s", rows, rows == 1 ? "" : "s");
  }
  return out;
}

}  // namespace

std::optional<TickShape> tick_shape(std::span<const std::int64_t> wall_ns,
                                    std::optional<unsigned> gpus, std::string& why) {
  if (wall_ns.size() < 2) {
    if (gpus.value_or(1) == 1) return TickShape{1, 0, 0};
    why = "the log has too few rows to tell its ticks apart";
    return std::nullopt;
  }
  std::vector<std::int64_t> deltas;
  for (std::size_t i = 1; i < wall_ns.size(); ++i) deltas.push_back(wall_ns[i] - wall_ns[i - 1]);
  std::sort(deltas.begin(), deltas.end());
  // The widest step between sorted gaps (as ratios: a few ms against ~an interval) splits the
  // gaps inside a tick from those between ticks.
  std::size_t split = 0;
  double widest = 0;
  for (std::size_t i = 1; i < deltas.size(); ++i) {
    const double lower = std::max<double>(static_cast<double>(deltas[i - 1]), 1e6);  // 1 ms
    const double ratio = static_cast<double>(deltas[i]) / lower;
    if (ratio > widest) {
      widest = ratio;
      split = i;
    }
  }
  TickShape shape;
  if (widest < 4 || deltas.front() < 0) {
    // One kind of gap: one row per tick.
    shape.gpus = 1;
    shape.interval_ns = median(deltas);
    shape.boundary_ns = deltas.front() < 0 ? 0 : std::max<std::int64_t>(deltas.front() / 2, 0);
    if (gpus.value_or(1) != 1) {
      why = fmt::format(
          "--log-gpus {} was given, but the rows come evenly spaced (~{:.0f} ms "
          "apart), one per tick",
          *gpus, static_cast<double>(shape.interval_ns) / 1e6);
      return std::nullopt;
    }
    return shape;
  }
  const std::int64_t inside = deltas[split - 1];
  const std::int64_t between = deltas[split];
  shape.boundary_ns = inside + (between - inside) / 2;
  const auto sizes = tick_sizes(wall_ns, shape.boundary_ns);
  // The count the user gave stands when most ticks agree with it: the tick that does not is
  // refused by TickCounter, naming its line.
  const auto most = std::max_element(
      sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const bool given_fits = gpus && most != sizes.end() && most->first == *gpus;
  if (!given_fits && (sizes.size() != 1 || sizes.begin()->second < 2)) {
    why = fmt::format("its ticks differ in size ({}): rows cannot be told apart by GPU",
                      sizes_text(sizes));
    return std::nullopt;
  }
  shape.gpus = static_cast<unsigned>(given_fits ? most->first : sizes.begin()->first);
  if (gpus && *gpus != shape.gpus) {
    why = fmt::format("--log-gpus {} was given, but the log's ticks hold {} rows each", *gpus,
                      shape.gpus);
    return std::nullopt;
  }
  // The interval: tick start to tick start, the gaps between ticks plus the rows inside.
  std::vector<std::int64_t> starts;
  for (std::size_t i = 0; i < wall_ns.size(); ++i) {
    if (i == 0 || wall_ns[i] - wall_ns[i - 1] > shape.boundary_ns) starts.push_back(wall_ns[i]);
  }
  std::vector<std::int64_t> periods;
  for (std::size_t i = 1; i < starts.size(); ++i) periods.push_back(starts[i] - starts[i - 1]);
  shape.interval_ns = periods.empty() ? between : median(periods);
  return shape;
}

std::optional<unsigned> TickCounter::next(std::int64_t wall_ns, std::string& why) {
  if (!started_ || wall_ns - last_ns_ > shape_.boundary_ns || shape_.gpus == 1) {
    if (started_ && position_ != shape_.gpus && shape_.gpus > 1) {
      why = fmt::format(
          "the tick before it holds {} rows where the log's ticks hold {}: which "
          "GPU is missing cannot be told",
          position_, shape_.gpus);
      return std::nullopt;
    }
    position_ = 0;
  }
  started_ = true;
  last_ns_ = wall_ns;
  if (position_ >= shape_.gpus) {
    why = fmt::format(
        "its tick holds more than the log's {} rows per tick (are two logs "
        "interleaved?)",
        shape_.gpus);
    return std::nullopt;
  }
  return position_++;
}

}  // namespace gpuscope::ingest
