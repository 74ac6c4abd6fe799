#include "collect/saturation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "collect/describe.hpp"
#include "core/error.hpp"

namespace gpuscope::collect {
namespace {

constexpr const char* kSaturationWords =
    "saturation metrics (SM active, occupancy, tensor, FP64/32/16, DRAM, PCIe, NVLink)";

enum class Source { None, Gpm, Dcgm };

struct Choice {
  Source source = Source::None;
  std::string detail;  // how, or why not
  std::optional<unsigned> dcgm_id;
  std::vector<unsigned short> dcgm_fields;
};

struct Plan {
  std::vector<Choice> gpus;  // parallel to the devices planned
  std::shared_ptr<DcgmFeed> dcgm;
};

void check_choice(const std::string& choice) {
  if (choice != "auto" && choice != "gpm" && choice != "dcgm") {
    throw Error::usage(fmt::format("--metrics-source {} is not a source", choice), {},
                       "give auto, gpm or dcgm");
  }
}

std::shared_ptr<DcgmFeed> open_feed(const BackendOptions& options, std::string& why_not) {
  try {
    auto library = open_dcgm_library(options);
    dcgm::ConnectOptions connect;
    connect.how = options.dcgm;
    return std::make_shared<DcgmFeed>(std::make_unique<dcgm::Session>(library, connect));
  } catch (const Error& e) {
    why_not = e.reason().empty() ? e.summary() : e.summary() + ": " + e.reason();
    if (options.metrics_source == "dcgm") {
      throw Error::usage(fmt::format("--metrics-source dcgm: {}", e.summary()), e.reason(),
                         e.hint());
    }
    return nullptr;
  }
}

// A MIG device: GPM of its GPU instance on Hopper and newer, else DCGM's GPU-instance entity
// (DCGM_FE_GPU_I) of its GPU instance, found through its GPU (docs/mig.md).
Choice mig_choice(const DeviceDescription& d, const std::vector<const DeviceDescription*>& devices,
                  const std::string& choice, Plan& plan, const std::string& dcgm_missing) {
  Choice c;
  const bool gpm = d.supports("gpm");
  if (gpm && choice != "dcgm") {
    c.source = Source::Gpm;
    c.detail = "GPM of its GPU instance";
    return c;
  }
  if (choice == "gpm") {
    c.detail = "no GPM before Hopper; --metrics-source gpm leaves DCGM out";
    return c;
  }
  if (!plan.dcgm) {
    // The same words as its GPU's, so one line says it for both.
    c.detail = gpm ? dcgm_missing : fmt::format("no GPM on this GPU, and {}", dcgm_missing);
    return c;
  }
  const auto parent = std::find_if(devices.begin(), devices.end(), [&](const auto* p) {
    return !p->mig && p->index == d.mig->parent_index;
  });
  const auto id = parent != devices.end() && (*parent)->uuid ? plan.dcgm->gpu_id(*(*parent)->uuid)
                                                             : std::nullopt;
  if (!id) {
    c.detail = "DCGM does not list its GPU";
    return c;
  }
  c.source = Source::Dcgm;
  c.dcgm_id = *id;
  c.detail = fmt::format("DCGM's GPU-instance entity, {}{}", plan.dcgm->session().description(),
                         gpm ? "; --metrics-source dcgm" : "; no GPM before Hopper");
  return c;
}

Plan make_plan(const std::vector<const DeviceDescription*>& devices,
               const BackendOptions& options) {
  check_choice(options.metrics_source);
  const std::string& choice = options.metrics_source;
  bool need_dcgm = choice == "dcgm";
  for (const DeviceDescription* d : devices) {
    if (choice == "auto" && !d->error && !d->supports("gpm")) need_dcgm = true;
  }
  Plan plan;
  std::string dcgm_missing;
  if (need_dcgm) plan.dcgm = open_feed(options, dcgm_missing);
  for (const DeviceDescription* d : devices) {
    Choice c;
    const bool gpm = d->supports("gpm");
    if (d->error) {
      c.detail = "the GPU could not be opened";
    } else if (d->mig) {
      c = mig_choice(*d, devices, choice, plan, dcgm_missing);
    } else if (choice == "gpm" || (choice == "auto" && gpm)) {
      c.source = gpm ? Source::Gpm : Source::None;
      c.detail = gpm ? (choice == "gpm" ? "--metrics-source gpm" : "Hopper or newer")
                     : "no GPM on this GPU (Hopper or newer has it); --metrics-source gpm "
                       "leaves DCGM out";
    } else if (!plan.dcgm) {
      c.detail = fmt::format("no GPM on this GPU, and {}", dcgm_missing);
    } else if (const auto id = d->uuid ? plan.dcgm->gpu_id(*d->uuid) : std::nullopt; !id) {
      c.detail = "DCGM does not list this GPU";
    } else if (auto fields = plan.dcgm->offered(*id); !fields) {
      c.detail = fmt::format("DCGM offers no profiling metrics on it: {}",
                             plan.dcgm->session().describe(fields.error()));
    } else if (fields->empty()) {
      c.detail = "DCGM offers none of the profiling fields gpuscope records on it";
    } else {
      c.source = Source::Dcgm;
      c.dcgm_id = *id;
      c.dcgm_fields = *fields;
      c.detail = fmt::format("{}{}", plan.dcgm->session().description(),
                             choice == "dcgm" ? "; --metrics-source dcgm"
                             : gpm            ? ""
                                              : "; no GPM on this GPU");
    }
    plan.gpus.push_back(std::move(c));
  }
  return plan;
}

const char* source_name(Source source) {
  switch (source) {
    case Source::Gpm:
      return "gpm";
    case Source::Dcgm:
      return "dcgm";
    case Source::None:
      break;
  }
  return "none";
}

// The devices of one summary line: "GPUs 0-3", "GPU 0 GI 1 (4g.40gb), GPU 0 GI 3 (2g.20gb)".
std::string device_words(const std::vector<const DeviceDescription*>& devices, bool plural) {
  std::vector<unsigned> gpus;
  std::vector<std::string> words;
  for (const DeviceDescription* d : devices) {
    if (d->mig) {
      words.push_back(mig_label(*d->mig));
    } else {
      gpus.push_back(d->index);
    }
  }
  if (!gpus.empty()) {
    words.insert(words.begin(),
                 fmt::format("GPU{} {}", plural && gpus.size() > 1 ? "s" : "", index_ranges(gpus)));
  }
  return fmt::format("{}", fmt::join(words, ", "));
}

// One line per distinct outcome: "saturation metrics of GPUs 0-3 from DCGM (embedded in
// gpuscope; no GPM on this GPU)".
std::vector<std::string> summary(const std::vector<const DeviceDescription*>& devices,
                                 const Plan& plan) {
  std::map<std::pair<int, std::string>, std::vector<const DeviceDescription*>> groups;
  for (std::size_t k = 0; k < devices.size(); ++k) {
    groups[{static_cast<int>(plan.gpus[k].source), plan.gpus[k].detail}].push_back(devices[k]);
  }
  std::vector<std::string> lines;
  for (const auto& [key, group] : groups) {
    if (static_cast<Source>(key.first) == Source::None) {
      lines.push_back(fmt::format("{}: {} will be empty ({})", device_words(group, false),
                                  kSaturationWords, key.second));
    } else {
      lines.push_back(
          fmt::format("saturation metrics of {} from {} ({})", device_words(group, true),
                      static_cast<Source>(key.first) == Source::Dcgm ? "DCGM" : "GPM", key.second));
    }
  }
  return lines;
}

// The reader of the MIG device `d`, or a note when it is gone since it was described.
void open_mig_reader(const nvml::Session& session, const DeviceDescription& d,
                     SaturationReading saturation, OpenedReaders& opened) {
  const MigIdentity& mig = *d.mig;
  auto device = find_mig_device(session, d);
  if (!device) {
    opened.notes.push_back(fmt::format(
        "MIG device {} is gone since it was described; it is not sampled", mig_label(mig)));
    return;
  }
  MigReading reading{session.device(mig.parent_index), d.index, mig.gpu_instance_id,
                     mig_label(mig)};
  opened.readers.push_back(std::make_unique<DeviceReader>(std::move(*device), std::move(reading),
                                                          opened.notes, std::move(saturation)));
}

// Starts one DCGM watch per GPU over the GPU-instance entities of its MIG devices that take
// DCGM; a device DCGM refuses gets no saturation source, and says why.
void start_instance_watches(const std::vector<DeviceDescription>& descriptions, Plan& plan,
                            std::chrono::microseconds interval, std::vector<std::string>& notes) {
  std::map<unsigned, std::vector<std::size_t>> by_gpu;  // DCGM GPU id -> devices
  for (std::size_t k = 0; k < descriptions.size(); ++k) {
    if (descriptions[k].mig && plan.gpus[k].source == Source::Dcgm) {
      by_gpu[*plan.gpus[k].dcgm_id].push_back(k);
    }
  }
  for (const auto& [gpu_id, members] : by_gpu) {
    std::vector<DcgmFeed::InstanceWanted> wanted;
    for (std::size_t k : members) {
      const MigIdentity& mig = *descriptions[k].mig;
      wanted.push_back({descriptions[k].index, mig.gpu_instance_id, mig_label(mig)});
    }
    const auto why = plan.dcgm->start_instances(gpu_id, wanted, interval, notes);
    for (std::size_t n = 0; n < members.size(); ++n) {
      if (why[n].empty()) continue;
      Choice& c = plan.gpus[members[n]];
      c.source = Source::None;
      c.detail = fmt::format("DCGM refused to watch its GPU instance: {}", why[n]);
    }
  }
}

}  // namespace

std::string index_ranges(std::vector<unsigned> indices) {
  std::sort(indices.begin(), indices.end());
  std::string out;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j > i ? fmt::format("{}-{}", indices[i], indices[j]) : fmt::format("{}", indices[i]);
    i = j + 1;
  }
  return out;
}

OpenedReaders open_readers(const nvml::Session& session, const std::vector<unsigned>& indices,
                           std::vector<DeviceDescription>& descriptions,
                           const BackendOptions& options, std::chrono::nanoseconds interval) {
  std::vector<const DeviceDescription*> devices;
  for (const auto& d : descriptions) devices.push_back(&d);
  Plan plan = make_plan(devices, options);
  OpenedReaders opened;
  std::vector<std::string> start_notes;
  const auto watch_interval = std::chrono::duration_cast<std::chrono::microseconds>(
      std::max<std::chrono::nanoseconds>(interval, kDcgmMinInterval));
  start_instance_watches(descriptions, plan, watch_interval, start_notes);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    Choice& c = plan.gpus[k];
    if (c.source == Source::Dcgm && !descriptions[k].mig) {
      if (const std::string why =
              plan.dcgm->start(indices[k], *c.dcgm_id, watch_interval, start_notes);
          !why.empty()) {
        c.source = Source::None;
        c.detail = fmt::format("DCGM refused to watch it: {}", why);
      }
    }
    SaturationReading reading;
    reading.gpm = c.source == Source::Gpm;
    if (c.source == Source::Dcgm) reading.dcgm = plan.dcgm;
    if (descriptions[k].mig) {
      open_mig_reader(session, descriptions[k], reading, opened);
    } else {
      opened.readers.push_back(
          std::make_unique<DeviceReader>(session.device(indices[k]), opened.notes, reading));
    }
    descriptions[k].saturation_source =
        c.source == Source::None ? std::nullopt : std::optional<std::string>(source_name(c.source));
    descriptions[k].saturation_detail = c.detail;
  }
  auto lines = summary(devices, plan);
  opened.notes.insert(opened.notes.begin(), lines.begin(), lines.end());
  opened.notes.insert(opened.notes.end(), start_notes.begin(), start_notes.end());
  return opened;
}

void describe_saturation(std::vector<DeviceDescription>& devices, const BackendOptions& options,
                         std::vector<std::string>& notes) {
  std::vector<const DeviceDescription*> pointers;
  for (const auto& d : devices) pointers.push_back(&d);
  const Plan plan = make_plan(pointers, options);
  for (std::size_t k = 0; k < devices.size(); ++k) {
    const Choice& c = plan.gpus[k];
    DeviceDescription& d = devices[k];
    d.saturation_source =
        c.source == Source::None ? std::nullopt : std::optional<std::string>(source_name(c.source));
    d.saturation_detail = c.detail;
    if (plan.dcgm && !d.error && !d.mig && (c.source == Source::Dcgm || !d.supports("gpm"))) {
      Capability cap{"dcgm", "DCGM profiling metrics", c.source == Source::Dcgm, {}};
      if (c.source == Source::Dcgm) {
        cap.label = fmt::format("DCGM profiling metrics ({})", describe_fields(c.dcgm_fields));
      } else {
        cap.detail = c.detail;
      }
      d.capabilities.push_back(std::move(cap));
    }
  }
  auto lines = summary(pointers, plan);
  notes.insert(notes.end(), lines.begin(), lines.end());
}

}  // namespace gpuscope::collect
