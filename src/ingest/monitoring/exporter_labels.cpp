#include "ingest/monitoring/exporter_labels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gpuscope::ingest {
namespace {

const std::string* find(const tsdb::Labels& labels, std::string_view key) {
  const auto it = labels.find(std::string(key));
  return it == labels.end() ? nullptr : &it->second;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_ip_address(std::string_view host) {
  if (host.find(':') != std::string_view::npos) return true;  // IPv6
  return !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
    return c == '.' || std::isdigit(static_cast<unsigned char>(c));
  });
}

// The host of "host:port", "[v6]:port", "host" or "v6".
std::string_view host_part(std::string_view value) {
  if (value.starts_with('[')) {
    const auto close = value.find(']');
    return close == std::string_view::npos ? value.substr(1) : value.substr(1, close - 1);
  }
  const auto colon = value.find(':');
  if (colon != std::string_view::npos && value.find(':', colon + 1) == std::string_view::npos) {
    return value.substr(0, colon);
  }
  return value;
}

}  // namespace

bool is_workload_label(std::string_view label) {
  if (label.substr(0, 9) == "exported_") label.remove_prefix(9);
  for (const JobLabel& j : kSlurmJobLabels) {
    if (label == j.label) return true;
  }
  for (const PodLabels& p : kPodLabels) {
    if (p.pod.starts_with("exported_")) continue;  // the prefix is taken off above
    if (label == p.pod || label == p.pod_namespace) return true;
  }
  // Also what names the workload without being asked for it: jobstats' userid and its older
  // jobId, the container, the pod's UID.
  static constexpr std::array<std::string_view, 5> kOthers = {"userid", "jobId", "container",
                                                              "container_name", "pod_uid"};
  return std::find(kOthers.begin(), kOthers.end(), label) != kOthers.end();
}

const std::string* gpu_uuid(const tsdb::Labels& labels) {
  for (const char* key : {"uuid", "UUID", "gpu_uuid"}) {
    if (const std::string* v = find(labels, key); v != nullptr && !v->empty()) return v;
  }
  return nullptr;
}

std::optional<unsigned> gpu_index(const tsdb::Labels& labels) {
  for (const char* key : {"gpu", "minor_number"}) {
    const std::string* v = find(labels, key);
    if (v == nullptr || v->empty() || v->size() > 4) continue;
    if (std::all_of(v->begin(), v->end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return static_cast<unsigned>(std::stoul(*v));
    }
  }
  return std::nullopt;
}

const std::string* gpu_model(const tsdb::Labels& labels) {
  for (const char* key : {"modelName", "model_name", "name"}) {
    if (const std::string* v = find(labels, key); v != nullptr && !v->empty()) return v;
  }
  return nullptr;
}

std::optional<MigLabels> mig_instance(const tsdb::Labels& labels) {
  const std::string* id = find(labels, "gpu_instance_id");
  if (id == nullptr || id->empty()) id = find(labels, "GPU_I_ID");
  // NVML's GPU instance ids are below 15; the row index of a MIG device holds ids below 100.
  if (id == nullptr || id->empty() || id->size() > 2 ||
      !std::all_of(id->begin(), id->end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  MigLabels out;
  out.gpu_instance_id = static_cast<unsigned>(std::stoul(*id));
  for (const char* key : {"mig_profile", "GPU_I_PROFILE"}) {
    if (const std::string* p = find(labels, key); p != nullptr && !p->empty()) {
      out.profile = *p;
      break;
    }
  }
  if (const std::string* u = find(labels, "mig_uuid"); u != nullptr && !u->empty()) {
    out.mig_uuid = *u;
  }
  return out;
}

std::string short_host(std::string_view value) {
  std::string host = lower(host_part(value));
  if (!is_ip_address(host)) host = host.substr(0, host.find('.'));
  return host;
}

std::string node_of(const tsdb::Labels& labels, const std::vector<std::string>& nodes) {
  std::string first;
  for (const auto key : kNodeLabels) {
    const std::string* v = find(labels, key);
    if (v == nullptr || v->empty()) continue;
    const std::string host = short_host(*v);
    for (const auto& node : nodes) {
      if (short_host(node) == host) return node;
    }
    if (first.empty()) first = host;
  }
  return first;
}

NodeIndex::NodeIndex(const std::vector<std::string>& nodes) {
  for (const auto& node : nodes) by_short_.try_emplace(short_host(node), node);
}

std::string NodeIndex::node_of(const tsdb::Labels& labels) const {
  std::string first;
  for (const auto key : kNodeLabels) {
    const std::string* v = find(labels, key);
    if (v == nullptr || v->empty()) continue;
    std::string host = short_host(*v);
    if (const auto it = by_short_.find(host); it != by_short_.end()) return it->second;
    if (first.empty()) first = std::move(host);
  }
  return first;
}

std::string whole_gpu_key(const tsdb::Labels& labels, const std::string& node) {
  if (const std::string* uuid = gpu_uuid(labels)) return *uuid;
  const auto index = gpu_index(labels);
  return fmt::format("{}/gpu{}", node, index ? std::to_string(*index) : "?");
}

std::string gpu_key(const tsdb::Labels& labels, const std::vector<std::string>& nodes) {
  std::string key = whole_gpu_key(labels, node_of(labels, nodes));
  if (const auto mig = mig_instance(labels)) key += fmt::format(" GI {}", mig->gpu_instance_id);
  return key;
}

}  // namespace gpuscope::ingest
