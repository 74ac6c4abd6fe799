#include "app/profile/run_context.hpp"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include "core/clock.hpp"

namespace gpuscope::app {

std::string short_host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "localhost";
  std::string host(buffer);
  return host.substr(0, host.find('.'));
}

std::string user_name() {
  if (const passwd* pw = getpwuid(geteuid()); pw != nullptr) return pw->pw_name;
  return std::to_string(geteuid());
}

RunEnd run_end(const launch::JobResult& result, const collect::SamplerStats& stats) {
  RunEnd end;
  end.status = result.status;
  end.end_wall_ns = result.end_wall_ns != 0 ? result.end_wall_ns : wall_now_ns();
  end.end_mono_ns = result.end_mono_ns != 0 ? result.end_mono_ns : mono_now_ns();
  end.exit_code = result.exit_code;
  end.term_signal = result.term_signal;
  end.samples_taken = stats.rows;
  end.deadlines_missed = stats.deadlines_missed;
  end.problems = result.problems;
  for (const unsigned index : stats.lost_gpu_indices) {
    end.problems.push_back(fmt::format(
        "GPU {} fell off the bus during the run (GPU_IS_LOST); it has no samples after that "
        "(the gpu_lost event has the time)",
        index));
  }
  if (stats.failed_calls > 0) {
    end.problems.push_back(
        fmt::format("{} calls to the GPU library (NVML, AMD SMI or ROCm SMI) failed while "
                    "sampling; those values are missing from the run",
                    stats.failed_calls));
  }
  if (stats.deadlines_missed > 0) {
    end.problems.push_back(fmt::format(
        "{} sampling deadlines were missed (the host or the driver was too slow for the interval)",
        stats.deadlines_missed));
  }
  return end;
}

}  // namespace gpuscope::app
