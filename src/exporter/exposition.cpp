#include "exporter/exposition.hpp"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "core/vendor.hpp"
#include "core/xid_catalog.hpp"
#include "exporter/jobstats_exposition.hpp"

namespace gpuscope::exporter {
namespace {

void add_label(std::string& out, std::string_view name, const std::string& value) {
  out += out.empty() ? "{" : ",";
  out += name;
  out += "=\"";
  out += escape_label_value(value);
  out += '"';
}

// `labels` (`{…}`) with `extra` added before the closing brace.
std::string with_labels(const std::string& labels,
                        std::initializer_list<std::pair<std::string_view, std::string>> extra) {
  std::string out = labels.substr(0, labels.size() - 1);
  for (const auto& [name, value] : extra) {
    if (name.empty()) continue;
    out += ',';
    out += name;
    out += "=\"";
    out += escape_label_value(value);
    out += '"';
  }
  out += '}';
  return out;
}

std::string series_labels(const std::string& labels, const HealthSeries& series) {
  const auto& [first, second] = series.labels;
  if (first.name.empty()) return labels;
  return with_labels(
      labels, {{first.name, std::string(first.value)}, {second.name, std::string(second.value)}});
}

// dcgm-exporter's labels of its Xid series: the number, and its words ("No Error" before any).
std::string xid_labels(const std::string& labels, unsigned xid) {
  std::string message = "Unknown Error";
  if (xid == 0) {
    message = "No Error";
  } else if (const XidInfo* info = xid_info(xid)) {
    message = info->description;
  }
  return with_labels(labels, {{"err_code", std::to_string(xid)}, {"err_msg", message}});
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

namespace {

// dcgm-exporter's label names, in its order, so its dashboards' queries and legends work
// unchanged; a GPU instance as dcgm-exporter labels one.
std::string dcgm_labels(const GpuIdentity& gpu, const ExportLabels& common) {
  std::string series;
  add_label(series, "gpu", std::to_string(gpu.gpu()));
  add_label(series, "UUID", gpu.uuid);
  add_label(series, "pci_bus_id", gpu.pci_bus_id);
  add_label(series, "device", fmt::format("{}{}", vendor_word(gpu.vendor), gpu.gpu()));
  add_label(series, "modelName", gpu.name);
  if (gpu.mig) {
    add_label(series, "GPU_I_PROFILE", gpu.mig->profile.value_or(""));
    add_label(series, "GPU_I_ID", std::to_string(gpu.mig->gpu_instance_id));
  }
  add_label(series, "Hostname", common.hostname);
  if (!common.driver_version.empty()) {
    add_label(series, "DCGM_FI_DRIVER_VERSION", common.driver_version);
  }
  return series;
}

// gpuscope's labels; with `amd`, AMD's Device Metrics Exporter's names for the same (gpu_id,
// gpu_uuid, card_series), so its dashboards' queries work. A MIG device as gpuscope labels one.
std::string own_labels(const GpuIdentity& gpu, const ExportLabels& common, bool amd) {
  std::string series;
  add_label(series, amd ? "gpu_id" : "gpu", std::to_string(gpu.gpu()));
  add_label(series, amd ? "gpu_uuid" : "uuid", gpu.uuid);
  if (amd) add_label(series, "card_series", gpu.name);
  if (gpu.mig) {
    add_label(series, "gpu_instance_id", std::to_string(gpu.mig->gpu_instance_id));
    add_label(series, "mig_profile", gpu.mig->profile.value_or(""));
    if (!amd) add_label(series, "mig_uuid", gpu.mig_uuid);
  }
  add_label(series, "hostname", common.hostname);
  return series;
}

}  // namespace

Exposition::Exposition(Naming naming, ExportLabels labels, const std::vector<GpuIdentity>& gpus)
    : naming_(naming), common_(std::move(labels)) {
  if (naming_ == Naming::Jobstats) {
    jobstats_gpus_ = gpus;  // no hostname label: jobstats knows the node by its scrape target
    return;
  }
  for (const GpuIdentity& gpu : gpus) {
    std::string series = naming_ == Naming::Dcgm ? dcgm_labels(gpu, common_)
                                                 : own_labels(gpu, common_, naming_ == Naming::Amd);
    std::string info;
    for (const auto& [name, value] : common_.extra) add_label(series, name, value);
    info = series;
    if (naming_ == Naming::Gpuscope) {
      add_label(info, "name", gpu.mig ? gpu.mig_name : gpu.name);
      add_label(info, "pci_bus_id", gpu.pci_bus_id);
      add_label(info, "vendor", std::string(vendor_word(gpu.vendor)));
    }
    base_labels_.push_back(series);
    series += '}';
    info += '}';
    indices_.push_back(gpu.index);
    gpu_labels_.push_back(std::move(series));
    info_labels_.push_back(std::move(info));
  }
  for (const auto& m : kMetrics) {
    metrics_[static_cast<std::size_t>(m.id)] = exported_metric(m.id, naming_);
  }
}

void Exposition::set_workload(
    const std::map<unsigned, std::vector<std::pair<std::string, std::string>>>& labels) {
  if (naming_ == Naming::Jobstats) {
    jobstats_workload_ = labels;
    return;
  }
  for (std::size_t k = 0; k < indices_.size(); ++k) {
    std::string series = base_labels_[k];
    if (auto it = labels.find(indices_[k]); it != labels.end()) {
      for (const auto& [name, value] : it->second) add_label(series, name, value);
    }
    gpu_labels_[k] = series + '}';
  }
}

std::string Exposition::label_body(unsigned device_index) const {
  for (std::size_t k = 0; k < indices_.size(); ++k) {
    if (indices_[k] == device_index) return base_labels_[k].substr(1);
  }
  return {};
}

const std::string* Exposition::labels_of(unsigned device_index) const {
  for (std::size_t k = 0; k < indices_.size(); ++k) {
    if (indices_[k] == device_index) return &gpu_labels_[k];
  }
  return nullptr;
}

void Exposition::append_value(std::string& out, std::string_view name, const std::string& labels,
                              double value) const {
  out += name;
  out += labels;
  out += ' ';
  out += format_value(value);
}

void Exposition::render_health(const Snapshot& snapshot, std::string& out) const {
  for (const HealthFamily& family : health_families(naming_)) {
    bool header = false;
    const auto line = [&](const std::string& labels, double value) {
      if (!header) {
        fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", family.name,
                       family.help, family.name, family.type);
        header = true;
      }
      append_value(out, family.name, labels, value * family.scale);
      out += '\n';
    };
    for (const GpuReading& gpu : snapshot.gpus) {
      const std::string* labels = labels_of(gpu.identity.index);
      if (labels == nullptr) continue;
      switch (family.source) {
        case HealthSource::Row:
          if (gpu.lost) break;
          for (const HealthSeries& series : family.series) {
            if (const auto value = gpu.health.get(series.metric))
              line(series_labels(*labels, series), *value);
          }
          break;
        // The Xids stay after a GPU is lost: its last one (79, fallen off the bus) is the news.
        case HealthSource::XidLast:
          if (gpu.samples == 0 && gpu.xid_events == 0) break;
          line(naming_ == Naming::Dcgm ? xid_labels(*labels, gpu.last_xid) : *labels, gpu.last_xid);
          break;
        case HealthSource::XidCount:
          if (gpu.samples > 0 || gpu.xid_events > 0)
            line(*labels, static_cast<double>(gpu.xid_events));
          break;
        case HealthSource::NvlinkRate:
          if (!gpu.lost && gpu.nvlink_kib_per_s) line(*labels, *gpu.nvlink_kib_per_s);
          break;
        case HealthSource::VgpuLicense:
          if (!gpu.lost && gpu.samples > 0) line(*labels, 0);
          break;
      }
    }
  }
}

std::string Exposition::render(const Snapshot& snapshot) const {
  if (naming_ == Naming::Jobstats)
    return render_jobstats(snapshot, jobstats_gpus_, jobstats_workload_);
  std::string out;
  out.reserve(512 + snapshot.gpus.size() * kMetricCount * 160);
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto& metric = metrics_[i];
    if (!metric) continue;
    bool header = false;
    for (const GpuReading& gpu : snapshot.gpus) {
      if (!gpu.latest.present.test(i) || gpu.lost) continue;
      const std::string* labels = labels_of(gpu.identity.index);
      if (labels == nullptr) continue;
      if (!header) {
        fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", metric->name,
                       metric->help, metric->name, metric->type);
        header = true;
      }
      append_value(out, metric->name, *labels, gpu.latest.values[i] * metric->scale);
      out += '\n';
    }
  }
  if (naming_ == Naming::Gpuscope && !snapshot.gpus.empty()) {
    out +=
        "# HELP gpuscope_gpu_info A GPU gpuscope samples (value 1), with its name and PCI bus id.\n"
        "# TYPE gpuscope_gpu_info gauge\n";
    for (std::size_t k = 0; k < info_labels_.size(); ++k) {
      out += "gpuscope_gpu_info" + info_labels_[k] + " 1\n";
    }
    out +=
        "# HELP gpuscope_energy_since_start_joules_total Energy used since gpuscope started "
        "sampling, from the hardware energy counter (J).\n"
        "# TYPE gpuscope_energy_since_start_joules_total counter\n";
    for (const GpuReading& gpu : snapshot.gpus) {
      const auto energy = gpu.energy_since_start_j();
      const std::string* labels = labels_of(gpu.identity.index);
      if (!energy || labels == nullptr || gpu.lost) continue;
      append_value(out, "gpuscope_energy_since_start_joules_total", *labels, *energy);
      out += '\n';
    }
    out +=
        "# HELP gpuscope_last_sample_timestamp_seconds When the GPU was last read (Unix time).\n"
        "# TYPE gpuscope_last_sample_timestamp_seconds gauge\n";
    for (const GpuReading& gpu : snapshot.gpus) {
      const std::string* labels = labels_of(gpu.identity.index);
      if (gpu.samples == 0 || labels == nullptr) continue;
      append_value(out, "gpuscope_last_sample_timestamp_seconds", *labels,
                   static_cast<double>(gpu.latest.wall_ns / 1'000'000) / 1e3);
      out += '\n';
    }
  }
  render_health(snapshot, out);
  return out;
}

std::size_t Exposition::append_lines(const SampleRow& row, std::string& out) const {
  const std::string* labels = labels_of(row.device_index);
  if (labels == nullptr) return 0;
  const std::string timestamp = fmt::format(" {}\n", row.wall_ns / 1'000'000);
  std::size_t lines = 0;
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    if (!row.present.test(i) || !metrics_[i]) continue;
    append_value(out, metrics_[i]->name, *labels, row.values[i] * metrics_[i]->scale);
    out += timestamp;
    ++lines;
  }
  return lines;
}

std::size_t Exposition::append_lines(const HealthRow& row, std::string& out) const {
  const std::string* labels = labels_of(row.device_index);
  if (labels == nullptr) return 0;
  const std::string timestamp = fmt::format(" {}\n", row.wall_ns / 1'000'000);
  std::size_t lines = 0;
  for (const HealthFamily& family : health_families(naming_)) {
    for (const HealthSeries& series : family.series) {
      const auto value = row.get(series.metric);
      if (!value) continue;
      append_value(out, family.name, series_labels(*labels, series), *value * family.scale);
      out += timestamp;
      ++lines;
    }
  }
  return lines;
}

std::size_t Exposition::append_lines(const PowerRow& row, std::string& out) const {
  SampleRow sample;
  sample.device_index = row.device_index;
  sample.wall_ns = row.wall_ns;
  if (row.power_w) sample.set(Metric::PowerW, *row.power_w);
  if (row.power_instant_w) sample.set(Metric::PowerInstantW, *row.power_instant_w);
  if (row.energy_mj) sample.set(Metric::EnergyMj, *row.energy_mj);
  return append_lines(sample, out);
}

}  // namespace gpuscope::exporter
