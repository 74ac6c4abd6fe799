#include "exporter/jobstats_exposition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <utility>

#include "core/clock_events.hpp"
#include "exporter/exposition.hpp"
#include "exporter/metric_names.hpp"

namespace gpuscope::exporter {
namespace {

// One metric family: its header and its lines, sorted when written.
struct Family {
  std::string help;
  std::vector<std::string> lines;
};
using Families = std::map<std::string, Family>;  // by name, the order the exporter writes them

// The labels of one GPU's series, and one extra label (a clock's type, the reasons), sorted by
// name as Go's client writes them: uppercase first (GPU_I_ID), then jobid ... uuid.
std::string labels_of(const GpuIdentity& gpu, const std::string& job, const std::string& uid,
                      std::string_view extra_name = {}, const std::string& extra_value = {}) {
  std::vector<std::pair<std::string_view, std::string>> labels = {
      {"GPU_I_ID", gpu.mig ? std::to_string(gpu.mig->gpu_instance_id) : std::string()},
      {"jobid", job},
      {"minor_number", std::to_string(gpu.gpu())},
      {"name", gpu.name},
      {"ordinal", std::to_string(gpu.gpu())},
      {"userid", uid},
      {"uuid", gpu.uuid},
  };
  if (!extra_name.empty()) labels.emplace_back(extra_name, extra_value);
  std::sort(labels.begin(), labels.end());
  std::string out = "{";
  for (const auto& [name, value] : labels) {
    if (out.size() > 1) out += ',';
    out += fmt::format("{}=\"{}\"", name, escape_label_value(value));
  }
  return out + '}';
}

void add(Families& families, const std::string& name, std::string_view help,
         const std::string& labels, double value) {
  Family& family = families[name];
  if (family.help.empty()) family.help = help;
  family.lines.push_back(fmt::format("{}{} {}", name, labels, format_value(value)));
}

std::string label_value(const LabelList& labels, std::string_view name) {
  for (const auto& [n, v] : labels) {
    if (n == name) return v;
  }
  return {};
}

// A job id or uid as the exporter's value: the number it parses; nullopt when it is not one.
std::optional<double> as_number(const std::string& text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

void add_gpu(Families& families, const GpuReading& gpu, const std::string& job,
             const std::string& uid) {
  const GpuIdentity& id = gpu.identity;
  const std::string labels = labels_of(id, job, uid);
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    if (!gpu.latest.present.test(i)) continue;
    const auto metric = exported_metric(static_cast<Metric>(i), Naming::Jobstats);
    if (!metric) continue;
    double value = gpu.latest.values[i] * metric->scale;
    if (metric->whole) value = std::round(value);
    if (static_cast<Metric>(i) == Metric::ClockEventReasons) {
      const std::string reasons = jobstats_clock_reasons(static_cast<std::uint64_t>(value));
      add(families, metric->name, metric->help, labels_of(id, job, uid, "reason", reasons), value);
    } else if (!metric->label_name.empty()) {
      add(families, metric->name, metric->help,
          labels_of(id, job, uid, metric->label_name, std::string(metric->label_value)), value);
    } else {
      add(families, metric->name, metric->help, labels, value);
    }
  }
  if (id.memory_total_bytes) {
    add(families, "nvidia_gpu_memory_total_bytes", "Total memory of the GPU device in bytes",
        labels, static_cast<double>(*id.memory_total_bytes));
  }
  if (const auto value = as_number(job)) {
    add(families, "nvidia_gpu_jobId",
        "JobId number of a job currently using this GPU as reported by Slurm", labels, *value);
  }
  if (const auto value = as_number(uid)) {
    add(families, "nvidia_gpu_jobUid", "Uid number of user running jobs on this GPU", labels,
        *value);
  }
}

}  // namespace

std::string jobstats_clock_reasons(std::uint64_t mask) {
  static constexpr std::array<std::pair<std::uint64_t, std::string_view>, 9> kWords = {{
      {kClockEventGpuIdle, "idle"},
      {kClockEventApplicationsClocksSetting, "application"},
      {kClockEventSwPowerCap, "swpowercap"},
      {kClockEventHwSlowdown, "hwslowdown"},
      {kClockEventSyncBoost, "syncboost"},
      {kClockEventSwThermalSlowdown, "swthermalslowdown"},
      {kClockEventHwThermalSlowdown, "hwthermalslowdown"},
      {kClockEventHwPowerBrakeSlowdown, "hwpowerbrakeslowdown"},
      {kClockEventDisplayClockSetting, "limited"},
  }};
  if (mask == 0) return "none";
  std::string out;
  for (const auto& [bit, word] : kWords) {
    if ((mask & bit) == 0) continue;
    if (!out.empty()) out += ',';
    out += word;
  }
  return out;
}

std::string render_jobstats(const Snapshot& snapshot, const std::vector<GpuIdentity>& gpus,
                            const std::map<unsigned, LabelList>& workload) {
  Families families;
  for (const GpuReading& gpu : snapshot.gpus) {
    if (gpu.lost || gpu.samples == 0) continue;
    const bool served = std::any_of(gpus.begin(), gpus.end(), [&](const GpuIdentity& g) {
      return g.index == gpu.identity.index;
    });
    if (!served) continue;
    const auto it = workload.find(gpu.identity.index);
    const LabelList none;
    const LabelList& job = it == workload.end() ? none : it->second;
    add_gpu(families, gpu, label_value(job, "jobid"), label_value(job, "userid"));
  }
  // Not per GPU, so without labels; the exporter writes it whenever NVML answers.
  add(families, "nvidia_gpu_num_devices", "Number of GPU devices", "",
      static_cast<double>(gpus.size()));
  std::string out;
  for (auto& [name, family] : families) {
    std::sort(family.lines.begin(), family.lines.end());
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} gauge\n", name, family.help,
                   name);
    for (const std::string& line : family.lines) {
      out += line;
      out += '\n';
    }
  }
  return out;
}

}  // namespace gpuscope::exporter
