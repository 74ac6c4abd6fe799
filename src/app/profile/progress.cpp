#include "app/profile/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "core/clock.hpp"

namespace gpuscope::app {

std::string format_duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto total = static_cast<long>(seconds);
  if (total < 3600) return fmt::format("{} min {:02} s", total / 60, total % 60);
  return fmt::format("{} h {:02} min", total / 3600, (total % 3600) / 60);
}

Progress::Progress(bool quiet, std::int64_t start_mono_ns, std::size_t gpus, std::string output)
    : quiet_(quiet),
      terminal_(isatty(STDERR_FILENO) != 0),
      start_mono_ns_(start_mono_ns),
      gpus_(gpus),
      output_(std::move(output)) {}

void Progress::started() {
  if (quiet_) return;
  if (gpus_ == 0) {
    fmt::print(stderr, "gpuscope: no GPU to sample; running the job and recording it in {}\n",
               output_);
  } else {
    fmt::print(stderr, "gpuscope: sampling {} GPU{} → {}\n", gpus_, gpus_ == 1 ? "" : "s", output_);
  }
}

void Progress::tick(std::int64_t samples, double total_power_w) {
  if (quiet_) return;
  const std::int64_t now = mono_now_ns();
  const double elapsed = seconds(now - start_mono_ns_);
  const std::string line =
      fmt::format("gpuscope: {} · {} GPU{} · {:.0f} W now · {} samples", format_duration(elapsed),
                  gpus_, gpus_ == 1 ? "" : "s", total_power_w, samples);
  if (terminal_) {
    fmt::print(stderr, "\r\033[K{}", line);
    std::fflush(stderr);
    drawn_ = true;
  } else if (now - last_log_ns_ >= 60'000'000'000) {
    // A log file gets a line a minute, not a line a second.
    fmt::print(stderr, "{}\n", line);
    last_log_ns_ = now;
  }
}

void Progress::finished() {
  if (drawn_) fmt::print(stderr, "\r\033[K");
  drawn_ = false;
}

void Progress::summary(const std::string& exit_text, const RunEnd& end, std::size_t gpus) const {
  const double elapsed = seconds(end.end_mono_ns - start_mono_ns_);
  fmt::print(stderr, "gpuscope: job {} after {} · {} GPU{} · {} samples → {}\n", exit_text,
             format_duration(elapsed), gpus, gpus == 1 ? "" : "s", end.samples_taken, output_);
  for (const auto& problem : end.problems) fmt::print(stderr, "gpuscope: warning: {}\n", problem);
}

}  // namespace gpuscope::app
