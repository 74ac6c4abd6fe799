#include "phases/phase_tracker.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope::phases {
namespace {

// "3 × step, 1 × eval" for a problem sentence (at most 5 names).
std::string list_names(const std::map<std::string, std::int64_t>& counts) {
  std::string out;
  int shown = 0;
  for (const auto& [name, n] : counts) {
    if (shown == 5) {
      out += fmt::format(" and {} more names", counts.size() - 5);
      break;
    }
    if (shown > 0) out += ", ";
    out += fmt::format("'{}' ×{}", name, n);
    ++shown;
  }
  return out;
}

std::int64_t total(const std::map<std::string, std::int64_t>& counts) {
  std::int64_t n = 0;
  for (const auto& [name, count] : counts) n += count;
  return n;
}

// A phase that begins (and, for a point, ends) at the edge.
Phase phase_at(const PhaseEdge& edge, bool point) {
  Phase phase;
  phase.source = edge.source;
  phase.name = edge.name;
  phase.instance = edge.instance;
  phase.pid = edge.pid;
  phase.tid = edge.tid;
  phase.start_mono_ns = edge.mono_ns;
  phase.end_mono_ns = edge.mono_ns;
  phase.point = point;
  return phase;
}

}  // namespace

PhaseTracker::PhaseTracker(std::function<void(Phase)> emit) : emit_(std::move(emit)) {}

bool PhaseTracker::begin(const PhaseEdge& edge) {
  Phase phase = phase_at(edge, false);
  std::lock_guard lock(mutex_);
  if (open_.size() >= kMaxOpen) {
    ++dropped_begins_;
    return false;
  }
  open_.push_back(std::move(phase));
  return true;
}

bool PhaseTracker::end(const PhaseEdge& edge) {
  std::unique_lock lock(mutex_);
  const auto matches = [&edge](const Phase& p, bool same_process) {
    return p.source == edge.source && p.name == edge.name && (!same_process || p.pid == edge.pid);
  };
  // The most recent open phase of the name: the same process's first, else anyone's.
  auto it =
      std::find_if(open_.rbegin(), open_.rend(), [&](const Phase& p) { return matches(p, true); });
  if (it == open_.rend()) {
    it = std::find_if(open_.rbegin(), open_.rend(),
                      [&](const Phase& p) { return matches(p, false); });
  }
  if (it == open_.rend()) {
    ++unmatched_[edge.name];
    return false;
  }
  Phase phase = std::move(*it);
  open_.erase(std::next(it).base());
  phase.end_mono_ns = std::max(edge.mono_ns, phase.start_mono_ns);
  closed_.push_back(std::move(phase));
  emit_closed(lock);
  return true;
}

void PhaseTracker::point(const PhaseEdge& edge) {
  Phase phase = phase_at(edge, true);
  std::unique_lock lock(mutex_);
  closed_.push_back(std::move(phase));
  emit_closed(lock);
}

int PhaseTracker::end_all(PhaseSource source, const std::string& name, std::int64_t mono_ns) {
  std::unique_lock lock(mutex_);
  int closed = 0;
  for (auto it = open_.begin(); it != open_.end();) {
    if (it->source == source && it->name == name) {
      Phase phase = std::move(*it);
      it = open_.erase(it);
      phase.end_mono_ns = std::max(mono_ns, phase.start_mono_ns);
      closed_.push_back(std::move(phase));
      ++closed;
    } else {
      ++it;
    }
  }
  emit_closed(lock);
  return closed;
}

void PhaseTracker::finish(std::int64_t mono_ns) {
  std::unique_lock lock(mutex_);
  // Innermost (latest opened) first, so what is emitted stays in closing order.
  while (!open_.empty()) {
    Phase phase = std::move(open_.back());
    open_.pop_back();
    phase.end_mono_ns = std::max(mono_ns, phase.start_mono_ns);
    phase.closed = false;
    ++never_closed_[phase.name];
    closed_.push_back(std::move(phase));
  }
  emit_closed(lock);
}

void PhaseTracker::emit_closed(std::unique_lock<std::mutex>& lock) {
  // One thread hands phases on at a time, so they reach emit_ in the order they closed; another
  // thread's (or the callback's own) calls meanwhile only queue theirs, for the loop below.
  if (emitting_) return;
  emitting_ = true;
  while (!closed_.empty()) {
    Phase phase = std::move(closed_.front());
    closed_.pop_front();
    ++emitted_;
    lock.unlock();
    try {
      if (emit_) emit_(std::move(phase));
    } catch (...) {
      lock.lock();
      emitting_ = false;  // the next call hands on what is still queued
      throw;
    }
    lock.lock();
  }
  emitting_ = false;
}

std::int64_t PhaseTracker::open_count() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::int64_t>(open_.size());
}

std::int64_t PhaseTracker::emitted() const {
  std::lock_guard lock(mutex_);
  return emitted_;
}

std::map<std::string, std::int64_t> PhaseTracker::unmatched_ends() const {
  std::lock_guard lock(mutex_);
  return unmatched_;
}

std::map<std::string, std::int64_t> PhaseTracker::never_closed() const {
  std::lock_guard lock(mutex_);
  return never_closed_;
}

std::vector<std::string> PhaseTracker::problems() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  if (dropped_begins_ > 0) {
    out.push_back(
        fmt::format("{} phase begin{} dropped: {} phases were open at once, none of "
                    "them ended",
                    dropped_begins_, dropped_begins_ == 1 ? " was" : "s were", kMaxOpen));
  }
  if (!unmatched_.empty()) {
    const auto n = total(unmatched_);
    out.push_back(fmt::format("{} phase end{} closed nothing (no phase of that name was open): {}",
                              n, n == 1 ? "" : "s", list_names(unmatched_)));
  }
  if (!never_closed_.empty()) {
    const auto n = total(never_closed_);
    out.push_back(fmt::format(
        "{} phase{} never ended and {} closed at the end of the job (closed = 0 in the phases "
        "table): {}",
        n, n == 1 ? "" : "s", n == 1 ? "was" : "were", list_names(never_closed_)));
  }
  return out;
}

}  // namespace gpuscope::phases
