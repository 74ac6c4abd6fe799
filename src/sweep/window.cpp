#include "sweep/window.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/regex_limits.hpp"

namespace gpuscope::sweep {

CounterTrack::CounterTrack(std::size_t max_readings)
    : max_readings_(std::max<std::size_t>(max_readings, 4)) {}

void CounterTrack::add(std::int64_t mono_ns, double value) {
  if (!readings_.empty() && mono_ns < readings_.back().mono_ns) return;
  if (readings_.size() >= max_readings_) {
    // Keep the even positions and the last: the readings stay spread over the whole trial.
    const Reading last = readings_.back();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < readings_.size(); i += 2) readings_[kept++] = readings_[i];
    readings_.resize(kept);
    if (readings_.back().mono_ns != last.mono_ns) readings_.push_back(last);
  }
  readings_.push_back({mono_ns, value});
}

std::optional<double> CounterTrack::at(std::int64_t mono_ns) const {
  if (readings_.empty()) return std::nullopt;
  if (mono_ns <= readings_.front().mono_ns) return readings_.front().value;
  if (mono_ns >= readings_.back().mono_ns) return readings_.back().value;
  const auto after =
      std::lower_bound(readings_.begin(), readings_.end(), mono_ns,
                       [](const Reading& r, std::int64_t t) { return r.mono_ns < t; });
  const auto before = after - 1;
  if (after->mono_ns == mono_ns) return after->value;
  const double fraction = static_cast<double>(mono_ns - before->mono_ns) /
                          static_cast<double>(after->mono_ns - before->mono_ns);
  return before->value + (after->value - before->value) * fraction;
}

std::regex compile_marker(const std::string& pattern, const std::string& option) {
  if (const auto past = regex_past_limits(pattern)) {
    throw Error::usage(fmt::format("{} '{}' is too large a regular expression", option, pattern),
                       *past, "give a shorter pattern with smaller counts");
  }
  std::regex regex;
  try {
    regex = std::regex(pattern);
  } catch (const std::regex_error& e) {
    throw Error::usage(fmt::format("{} '{}' is not a valid regular expression", option, pattern),
                       e.what(), "use ECMAScript syntax, e.g. 'training starts at ([0-9.]+)'");
  }
  if (regex.mark_count() > 1) {
    throw Error::usage(fmt::format("{} '{}' has {} groups", option, pattern, regex.mark_count()),
                       {},
                       "give none (the line's arrival marks the moment) or one: the job's "
                       "time.monotonic() in seconds, e.g. 'work begins at ([0-9.]+)'");
  }
  return regex;
}

MarkerTime marker_time(const std::smatch& match, std::int64_t job_start_mono_ns,
                       std::int64_t arrival_mono_ns) {
  MarkerTime out;
  out.mono_ns = arrival_mono_ns;
  if (match.size() < 2 || !match[1].matched) return out;
  const std::string text = match[1].str();
  double seconds = NAN;
  try {
    std::size_t used = 0;
    seconds = std::stod(text, &used);
    if (used != text.size()) seconds = NAN;
  } catch (const std::exception&) {
    seconds = NAN;
  }
  if (!std::isfinite(seconds)) {
    out.problem = fmt::format("'{}' is not a number of seconds", text);
    return out;
  }
  constexpr std::int64_t kSlackNs = 1'000'000;
  const double ns = seconds * 1e9;
  if (ns < static_cast<double>(job_start_mono_ns - kSlackNs) ||
      ns > static_cast<double>(arrival_mono_ns + kSlackNs)) {
    out.problem = fmt::format(
        "{} s is not a CLOCK_MONOTONIC time between the job's start ({:.3f} s) and the line's "
        "arrival ({:.3f} s)",
        text, static_cast<double>(job_start_mono_ns) / 1e9,
        static_cast<double>(arrival_mono_ns) / 1e9);
    return out;
  }
  out.mono_ns =
      std::clamp(static_cast<std::int64_t>(std::llround(ns)), job_start_mono_ns, arrival_mono_ns);
  out.from_job = true;
  return out;
}

}  // namespace gpuscope::sweep
