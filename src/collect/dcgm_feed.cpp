#include "collect/dcgm_feed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpuscope::collect {
namespace {

bool is_prof(unsigned short field) {
  return field >= 1001 && field <= 1096;
}

const DcgmMapping* mapping_of(unsigned short field);

std::string field_words(unsigned short field) {
  if (const DcgmMapping* m = mapping_of(field)) return std::string(info(m->metric).name);
  return fmt::format("field {}", field);
}

// The value as a double, or nullopt for a failed or blank one.
std::optional<double> number(const dcgmFieldValue_v2& v) {
  if (v.status != dcgm::kOk) return std::nullopt;
  if (v.fieldType == dcgm::kTypeDouble) {
    if (dcgm::is_blank(v.value.dbl) || !(v.value.dbl >= 0)) return std::nullopt;
    return v.value.dbl;
  }
  if (v.fieldType == dcgm::kTypeInt64) {
    if (dcgm::is_blank(v.value.i64) || v.value.i64 < 0) return std::nullopt;
    return static_cast<double>(v.value.i64);
  }
  return std::nullopt;
}

// The mapping of a field id, through a table built once (the sampling loop asks for every value
// of every sample).
const DcgmMapping* mapping_of(unsigned short field) {
  static const auto table = [] {
    std::array<const DcgmMapping*, 1100> out{};
    for (const auto& m : dcgm_mappings()) out.at(m.field) = &m;
    return out;
  }();
  return field < table.size() ? table[field] : nullptr;
}

// The profiling fields gpuscope maps that the metric groups list, in the order watched.
std::vector<unsigned short> mapped_profiling_fields(const std::vector<dcgm::MetricGroup>& groups) {
  std::set<unsigned short> all;
  for (const auto& g : groups) all.insert(g.fields.begin(), g.fields.end());
  std::vector<unsigned short> fields;
  for (const auto& m : dcgm_mappings()) {
    if (is_prof(m.field) && all.count(m.field) > 0) fields.push_back(m.field);
  }
  return fields;
}

bool is_blank_value(const dcgmFieldValue_v2& v) {
  if (v.status != dcgm::kOk) return false;
  if (v.fieldType == dcgm::kTypeDouble) return dcgm::is_blank(v.value.dbl);
  if (v.fieldType == dcgm::kTypeInt64) return dcgm::is_blank(v.value.i64);
  return false;
}

}  // namespace

std::span<const DcgmMapping> dcgm_mappings() {
  return dcgm::kFieldMappings;
}

SinglePass single_pass(const std::vector<dcgm::MetricGroup>& groups,
                       const std::vector<unsigned short>& wanted) {
  const std::set<unsigned short> want(wanted.begin(), wanted.end());
  std::map<unsigned short, const dcgm::MetricGroup*> best;  // by major
  std::map<unsigned short, std::size_t> best_count;
  for (const auto& group : groups) {
    const auto count = static_cast<std::size_t>(std::count_if(
        group.fields.begin(), group.fields.end(), [&](auto f) { return want.count(f) > 0; }));
    if (best.count(group.major) == 0 || count > best_count[group.major]) {
      best[group.major] = &group;
      best_count[group.major] = count;
    }
  }
  std::set<unsigned short> chosen;
  for (const auto& [major, group] : best) {
    for (auto f : group->fields) {
      if (want.count(f) > 0) chosen.insert(f);
    }
  }
  SinglePass pass;
  for (auto f : wanted) (chosen.count(f) > 0 ? pass.fields : pass.left_out).push_back(f);
  return pass;
}

std::string describe_fields(const std::vector<unsigned short>& fields) {
  std::vector<std::string> words;
  for (auto f : fields) words.push_back(field_words(f));
  return fmt::format("{}", fmt::join(words, ", "));
}

DcgmFeed::~DcgmFeed() {
  gpus_.clear();  // the watches go before the session
}

std::optional<unsigned> DcgmFeed::gpu_id(const std::string& uuid) {
  if (!uuids_) {
    uuids_.emplace();
    if (auto ids = session_->gpu_ids()) {
      for (unsigned id : *ids) {
        if (auto text = session_->uuid(id)) (*uuids_)[*text] = id;
      }
    }
  }
  auto it = uuids_->find(uuid);
  return it == uuids_->end() ? std::nullopt : std::optional<unsigned>(it->second);
}

dcgm::Expected<std::vector<unsigned short>> DcgmFeed::offered(unsigned gpu_id) const {
  auto groups = session_->metric_groups(gpu_id);
  if (!groups) return tl::unexpected(groups.error());
  return mapped_profiling_fields(*groups);
}

dcgm::Expected<std::unique_ptr<dcgm::Watch>> DcgmFeed::watch(
    const std::vector<dcgmGroupEntityPair_t>& entities,
    const std::vector<dcgm::MetricGroup>& groups, const std::vector<unsigned short>& prof,
    const std::vector<unsigned short>& device, std::chrono::microseconds interval,
    const std::string& who, std::vector<std::string>& notes) {
  auto with_device = [&](std::vector<unsigned short> fields) {
    fields.insert(fields.end(), device.begin(), device.end());
    return fields;
  };
  auto watch = dcgm::Watch::start_entities(*session_, entities, with_device(prof), interval);
  if (!watch && watch.error().code == dcgm::kProfilingMultiPass) {
    // This DCGM does not multiplex these counters: watch what one pass can give.
    const SinglePass pass = single_pass(groups, prof);
    watch = dcgm::Watch::start_entities(*session_, entities, with_device(pass.fields), interval);
    if (watch) {
      notes.push_back(fmt::format(
          "{}: DCGM cannot collect {} in the same pass as the other counters on this GPU "
          "(PROFILING_MULTI_PASS); they will be empty",
          who, describe_fields(pass.left_out)));
    }
  }
  return watch;
}

std::string DcgmFeed::refusal(const dcgm::Failure& failure) const {
  std::string why = session_->describe(failure);
  if (failure.code == dcgm::kInUse) {
    why += session_->embedded()
               ? "; another DCGM (an nv-hostengine, e.g. dcgm-exporter's) or a profiler holds "
                 "the counters: let gpuscope join it with --dcgm auto or --dcgm HOST:PORT"
               : "; another profiler holds the counters";
  }
  return why;
}

std::string DcgmFeed::start(unsigned index, unsigned gpu_id, std::chrono::microseconds interval,
                            std::vector<std::string>& notes) {
  // One call: the groups give both the fields to watch and, should DCGM refuse to multiplex
  // them, the single-pass fallback.
  const auto groups = session_->metric_groups(gpu_id);
  if (!groups) return session_->describe(groups.error());
  const std::vector<unsigned short> prof = mapped_profiling_fields(*groups);
  if (prof.empty()) return "DCGM lists no profiling field gpuscope records for this GPU";
  std::vector<unsigned short> device;
  for (const auto& m : dcgm_mappings()) {
    if (m.fallback) device.push_back(m.field);
  }
  const std::string who = fmt::format("GPU {}", index);
  auto watch =
      this->watch({{dcgm::kEntityGpu, gpu_id}}, *groups, prof, device, interval, who, notes);
  if (!watch) return refusal(watch.error());
  Gpu gpu;
  gpu.entity = {dcgm::kEntityGpu, gpu_id};
  gpu.label = who;
  gpu.watch = std::move(*watch);
  gpus_[index] = std::move(gpu);
  return {};
}

std::vector<std::string> DcgmFeed::start_instances(unsigned gpu_id,
                                                   const std::vector<InstanceWanted>& wanted,
                                                   std::chrono::microseconds interval,
                                                   std::vector<std::string>& notes) {
  std::vector<std::string> why(wanted.size());
  auto all = [&](const std::string& text) {
    std::fill(why.begin(), why.end(), text);
    return why;
  };
  const auto instances = session_->gpu_instances();
  if (!instances) return all(session_->describe(instances.error()));
  const auto groups = session_->metric_groups(gpu_id);
  if (!groups) return all(session_->describe(groups.error()));
  // PCIe and NVLink are the GPU's: DCGM answers its GPU's value on an instance.
  std::vector<unsigned short> prof;
  for (unsigned short f : mapped_profiling_fields(*groups)) {
    if (f < dcgm::kProfPcieTxBytes || f > dcgm::kProfNvlinkRxBytes) prof.push_back(f);
  }
  if (prof.empty()) return all("DCGM lists no per-instance profiling field gpuscope records");
  std::vector<dcgmGroupEntityPair_t> entities;
  std::vector<std::size_t> watched;  // indices into wanted
  for (std::size_t k = 0; k < wanted.size(); ++k) {
    // DCGM numbers GPU instances its own way: match its hierarchy on GPU and NVML instance id.
    const auto it = std::find_if(instances->begin(), instances->end(), [&](const auto& e) {
      return e.gpu_id == gpu_id && e.gpu_instance_id == wanted[k].gpu_instance_id;
    });
    if (it == instances->end()) {
      why[k] = "DCGM's MIG hierarchy does not list this GPU instance";
      continue;
    }
    entities.push_back({dcgm::kEntityGpuI, it->entity_id});
    watched.push_back(k);
  }
  if (entities.empty()) return why;
  // Joined by hand: clang 14 (the fuzz build) cannot compile libstdc++ 12's views.
  std::string labels;
  for (std::size_t k : watched) labels += (labels.empty() ? "" : ", ") + wanted[k].label;
  const std::string who = fmt::format("MIG device{} {}", watched.size() > 1 ? "s" : "", labels);
  auto watch = this->watch(entities, *groups, prof, {}, interval, who, notes);
  if (!watch) {
    const std::string text = refusal(watch.error());
    for (std::size_t k : watched) why[k] = text;
    return why;
  }
  std::shared_ptr<dcgm::Watch> shared = std::move(*watch);
  for (std::size_t n = 0; n < watched.size(); ++n) {
    const InstanceWanted& w = wanted[watched[n]];
    Gpu gpu;
    gpu.entity = entities[n];
    gpu.label = "MIG device " + w.label;
    gpu.watch = shared;
    gpu.instance = true;
    gpus_[w.row_index] = std::move(gpu);
  }
  return why;
}

std::optional<std::string> DcgmFeed::read(unsigned index, SampleRow& row, unsigned& failed_calls) {
  auto it = gpus_.find(index);
  if (it == gpus_.end()) return std::nullopt;
  Gpu& gpu = it->second;
  if (auto status = gpu.watch->latest(gpu.entity, gpu.values); !status) {
    ++failed_calls;
    if (gpu.call_failed) return std::nullopt;
    gpu.call_failed = true;
    return fmt::format(
        "DCGM stopped answering for {} ({}); its saturation metrics are empty "
        "until it answers again",
        gpu.label, session_->describe(status.error()));
  }
  std::optional<std::string> event;
  if (gpu.call_failed) {
    gpu.call_failed = false;
    event = fmt::format("DCGM answers again for {}", gpu.label);
  }
  // The newest profiling sample; older or equal ones were read already.
  std::int64_t newest = 0;
  std::size_t prof_values = 0;
  std::size_t blank = 0;
  for (const auto& v : gpu.values) {
    if (!is_prof(v.fieldId)) continue;
    ++prof_values;
    if (is_blank_value(v)) ++blank;
    if (v.status == dcgm::kOk) newest = std::max(newest, v.ts);
  }
  const bool fresh = newest > gpu.last_ts;
  if (fresh && prof_values > 0) {
    const bool gone = blank == prof_values;
    if (gone != gpu.counters_gone) {
      gpu.counters_gone = gone;
      event = gone ? fmt::format(
                         "DCGM's profiling counters on {} are held elsewhere (a profiler such "
                         "as Nsight Compute, or dcgmi profile --pause); saturation metrics are "
                         "empty until they return",
                         gpu.label)
                   : fmt::format("DCGM's profiling counters on {} are back", gpu.label);
    }
  }
  for (const auto& v : gpu.values) {
    const DcgmMapping* mapping = mapping_of(v.fieldId);
    if (mapping == nullptr) continue;
    if (is_prof(v.fieldId) && !fresh) continue;
    if (mapping->fallback && row.get(mapping->metric)) continue;
    auto value = number(v);
    if (!value) continue;
    // An instance's ratio above 1 is a known DCGM fault (NVIDIA/DCGM#152): a fraction of the
    // instance cannot exceed all of it.
    if (gpu.instance && mapping->scale == 100.0) value = std::min(*value, 1.0);
    row.set(mapping->metric, *value * mapping->scale);
  }
  if (fresh) gpu.last_ts = newest;
  return event;
}

}  // namespace gpuscope::collect
