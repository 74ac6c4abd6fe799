#include "report/job_mail.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>
#include <vector>

#include "util/visible_text.hpp"

namespace gpuscope::report {
namespace {

constexpr double kBytesPerGib = 1024.0 * 1024 * 1024;

// What each flag means, in a few words for someone who did not read docs/fleet.md.
std::string_view flag_meaning(JobFlag flag) {
  switch (flag) {
    case JobFlag::IdleGpus:
      return "a GPU was idle for at least half of the job";
    case JobFlag::Straggler:
      return "a GPU was more than 15 % less active than the others";
    case JobFlag::GpuTooLarge:
      return "little memory and activity: a MIG slice or a smaller GPU would do";
    case JobFlag::HealthFault:
      return "a GPU reported an Xid, ECC or row remap fault";
    case JobFlag::Count:
      break;
  }
  return "";
}

std::string elapsed(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, seconds));
  if (s >= 86'400) {
    return fmt::format("{}-{:02}:{:02}:{:02}", s / 86'400, s / 3600 % 24, s / 60 % 60, s % 60);
  }
  return fmt::format("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

bool known(const std::optional<double>& v) {
  return v && std::isfinite(*v);
}

// GPU-hours with enough digits that a short job does not read 0.00.
std::string hours(double h) {
  return h >= 10 ? fmt::format("{:.1f}", h) : fmt::format("{:.3f}", h);
}

std::string energy(double joules) {
  if (joules >= 3.6e6) return fmt::format("{:.2f} kWh", joules / 3.6e6);
  return fmt::format("{:.1f} kJ", joules / 1e3);
}

std::string grams(double g) {
  return g >= 1000 ? fmt::format("{:.2f} kg", g / 1000) : fmt::format("{:.0f} g", g);
}

void line(std::string& out, std::string_view label, const std::string& value) {
  out += fmt::format("  {:<17}{}\n", fmt::format("{}:", label), value);
}

std::string gpus_line(const SiteJob& job) {
  std::string text = fmt::format("{}", job.gpus);
  if (!job.gpu_model.empty()) text += " x " + util::visible(job.gpu_model);
  if (!job.nodes.empty()) {
    std::vector<std::string> nodes;
    for (const auto& n : job.nodes) nodes.push_back(util::visible(n));
    text += fmt::format(" on {}", fmt::join(nodes, ","));
  }
  return text + fmt::format(", {}", elapsed(job.elapsed_s()));
}

std::string activity_line(const SiteJob& job) {
  std::string text = fmt::format("{:.1f} %", *job.util_pct);
  if (known(job.sm_active_pct)) text += fmt::format(", SM active {:.1f} %", *job.sm_active_pct);
  return text;
}

std::string energy_line(const SiteJob& job) {
  std::string text = energy(*job.energy_j) + " (GPUs)";
  if (known(job.node_energy_j)) text += fmt::format(", nodes {}", energy(*job.node_energy_j));
  if (known(job.co2_g)) text += fmt::format(", CO2 {}", grams(*job.co2_g));
  return text;
}

void figures(std::string& out, const SiteJob& job) {
  std::string gpu_hours = hours(job.gpu_hours);
  if (known(job.idle_gpu_hours)) gpu_hours += fmt::format(", idle {}", hours(*job.idle_gpu_hours));
  line(out, "GPU-hours", gpu_hours);
  if (known(job.util_pct)) line(out, "GPU utilization", activity_line(job));
  if (known(job.peak_memory_bytes)) {
    line(out, "Peak GPU memory", fmt::format("{:.1f} GiB", *job.peak_memory_bytes / kBytesPerGib));
  }
  if (known(job.energy_j)) line(out, "Energy", energy_line(job));
  if (known(job.score)) line(out, "Score", fmt::format("{:.2f} (0 to 1)", *job.score));
}

}  // namespace

std::string job_mail_summary(const SiteJob& job) {
  const std::string id = util::visible(job.shown_id.empty() ? job.id : job.shown_id);
  std::string out = fmt::format("GPU summary of job {} (gpuscope)\n", id);
  line(out, "GPUs", gpus_line(job));
  if (job.source == JobSource::None) {
    line(out, "Figures", "none: the monitoring server has no samples of this job");
  } else {
    figures(out, job);
  }
  for (const JobFlag flag : job.flags) {
    line(out, "Flag", fmt::format("{}: {}", flag_word(flag), flag_meaning(flag)));
  }
  for (const auto& note : job.notes) line(out, "Note", util::visible(note));
  line(out, "Full analysis", fmt::format("gpuscope job {}", util::visible(job.id)));
  return out;
}

std::string job_mail_unavailable(const std::string& job_id, const std::string& why) {
  return fmt::format("(No GPU summary of job {}: {}.)\n", util::visible(job_id),
                     util::visible(why));
}

}  // namespace gpuscope::report
