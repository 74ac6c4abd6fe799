// TickCounter (log_ticks.hpp): rows to GPUs by their place in the tick, each tick checked as it
// comes against the gaps around it and the fixed facts of the GPU at each place.
#include <fmt/format.h>

#include <algorithm>

#include "ingest/logs/log_ticks.hpp"

namespace gpuscope::ingest {
namespace {

// Ticks in a row that straddle the gaps around them before the rows are taken to have shifted
// (a single one is a loaded machine's jitter; a shift shows in every tick after it).
constexpr unsigned kShifted = 8;

std::string facts_text(const std::vector<std::string>& facts) {
  std::string out;
  for (const auto& f : facts) {
    if (f.empty()) continue;
    out += out.empty() ? "" : ", ";
    out += f;
  }
  return out;
}

}  // namespace

TickCounter::TickCounter(TickShape shape) : shape_(std::move(shape)) {
  position_ = shape_.first_position % std::max(shape_.gpus, 1U);
}

void TickCounter::restart(bool keep_facts) {
  if (!keep_facts) facts_.clear();
  started_ = false;
  pending_ = false;
  straddling_ = 0;
  position_ = 0;
}

std::optional<unsigned> TickCounter::next(const TickRow& row, std::size_t line, std::string& why) {
  if (!started_) {
    started_ = true;
    gap_before_ = -1;
    inner_max_ = 0;
    tick_line_ = line;
  } else {
    const std::int64_t gap = row.wall_ns - last_ns_;
    if (position_ == 0) {
      if (pending_) {
        pending_ = false;
        const bool apart =
            (pending_before_ < 0 || pending_inner_ < pending_before_) && pending_inner_ < gap;
        if (shape_.timed && !apart) {
          if (straddling_++ == 0) straddle_line_ = pending_line_;
          if (straddling_ >= kShifted) {
            why = fmt::format(
                "from the tick at line {} on, the rows no longer fall into ticks of {} (each "
                "tick's rows straddle a gap between ticks): a row is missing or extra, and which "
                "GPU cannot be told",
                straddle_line_, shape_.gpus);
            return std::nullopt;
          }
        } else {
          jittered_ += straddling_;
          straddling_ = 0;
        }
      }
      gap_before_ = gap;
      inner_max_ = 0;
      tick_line_ = line;
    } else {
      inner_max_ = std::max(inner_max_, gap);
    }
  }
  last_ns_ = row.wall_ns;
  const unsigned place = position_;
  if (facts_.size() <= place) facts_.resize(place + 1);
  auto& known = facts_[place];
  for (std::size_t i = 0; i < row.facts.size(); ++i) {
    if (known.size() <= i) known.resize(i + 1);
    if (row.facts[i].empty()) continue;
    if (known[i].empty()) {
      known[i] = row.facts[i];
    } else if (known[i] != row.facts[i]) {
      why = fmt::format(
          "by its place in its tick it is GPU {} of {}, but its fixed facts ({}) are not that "
          "GPU's ({}): a row is missing or extra, and which GPU cannot be told",
          place, shape_.gpus, facts_text(row.facts), facts_text(known));
      return std::nullopt;
    }
  }
  position_ = (position_ + 1) % shape_.gpus;
  if (position_ == 0) {
    pending_ = true;
    pending_before_ = gap_before_;
    pending_inner_ = inner_max_;
    pending_line_ = tick_line_;
  }
  return place;
}

bool TickCounter::finish(std::string& why) {
  if (pending_ && shape_.timed && pending_before_ >= 0 && pending_inner_ >= pending_before_) {
    if (straddling_++ == 0) straddle_line_ = pending_line_;
  }
  pending_ = false;
  if (straddling_ < 3) {
    jittered_ += straddling_;
    straddling_ = 0;
    return true;
  }
  why = fmt::format(
      "from the tick at line {} to the end, the rows do not fall into ticks of {}: a row is "
      "missing or extra, and which GPU cannot be told",
      straddle_line_, shape_.gpus);
  return false;
}

}  // namespace gpuscope::ingest
