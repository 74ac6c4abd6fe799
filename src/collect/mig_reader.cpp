// The MIG parts of DeviceReader (docs/mig.md): reading a MIG device (its memory and its GPU
// instance's GPM or DCGM values, nothing its parent GPU does not split), and watching a GPU's MIG
// mode and instances while a run lasts.
#include <fmt/format.h>

#include <algorithm>

#include "collect/device_reader.hpp"
#include "core/mig.hpp"

namespace gpuscope::collect {
namespace {

// How often a GPU's reader looks at its MIG mode and instances.
constexpr std::int64_t kMigCheckNs = 1'000'000'000;

// A MIG device's handle names nothing any more: its instance was destroyed.
bool instance_gone(nvmlReturn_t code) {
  return code == nvml::kErrorInvalidArgument || code == nvml::kErrorNotFound;
}

}  // namespace

DeviceReader::DeviceReader(nvml::Device device, MigReading mig, std::vector<std::string>& notes,
                           SaturationReading saturation)
    : device_(std::move(device)), dcgm_(std::move(saturation.dcgm)), mig_(std::move(mig)) {
  probe_mig(notes, saturation.gpm);
}

void DeviceReader::probe_mig(std::vector<std::string>& notes, bool gpm) {
  std::vector<std::string> missing;
  const auto memory = device_.memory();
  memory_ = memory.has_value();
  if (!memory && instance_gone(memory.error().code)) {
    gone_ = true;
    notes.push_back(fmt::format("MIG device {} is gone; it is not sampled", mig_->label));
    return;
  }
  if (!memory) {
    missing.push_back(
        fmt::format("memory usage ({})", device_.library().error_string(memory.error().code)));
  }
  if (gpm) {
    if (auto why = open_gpm()) missing.push_back(fmt::format("GPM (it {})", *why));
  }
  if (!missing.empty()) {
    notes.push_back(fmt::format("MIG device {}: {} not available; it will be empty", mig_->label,
                                fmt::join(missing, ", ")));
  }
}

ReadOutcome DeviceReader::read_mig(SampleRow& row, std::int64_t mono_ns) {
  ReadOutcome outcome;
  if (gone_) return outcome;
  row.device_index = mig_->row_index;
  if (memory_) {
    if (auto m = device_.memory()) {
      row.set(Metric::MemoryUsedBytes, static_cast<double>(m->used_bytes));
      row.set(Metric::MemoryFreeBytes, static_cast<double>(m->free_bytes));
    } else if (instance_gone(m.error().code) || m.error().code == nvml::kErrorGpuIsLost) {
      gone_ = true;
    } else {
      ++outcome.failed_calls;
    }
  }
  if (gpm_ && !gone_) {
    Gpm& gpm = *gpm_;
    if (gpm.previous_mono_ns == 0) gpm.previous_mono_ns = mono_ns;
    const auto min_interval_ns = static_cast<std::int64_t>(nvml::kGpmMinIntervalSeconds * 1e9);
    if (mono_ns - gpm.previous_mono_ns >= min_interval_ns) {
      if (auto status = take_gpm(gpm.next); !status) {
        if (instance_gone(status.error().code) || status.error().code == nvml::kErrorGpuIsLost) {
          gone_ = true;
        } else {
          ++outcome.failed_calls;
        }
      } else if (gpm.query.compute(gpm.previous, gpm.next, gpm_values_)) {
        for (std::size_t k = 0; k < gpm_values_.size(); ++k) {
          if (gpm_values_[k]) row.set(gpm_metrics_[k], *gpm_values_[k] * gpm_scale_[k]);
        }
        std::swap(gpm.previous, gpm.next);
        gpm.previous_mono_ns = mono_ns;
      } else {
        ++outcome.failed_calls;
      }
    }
  }
  if (dcgm_ && !gone_) {
    outcome.source_event = dcgm_->read(mig_->row_index, row, outcome.failed_calls);
  }
  if (gone_) {
    // The parent GPU, when it is lost, says so itself; this is about the instance.
    row.present.reset();
    outcome.mig_events.push_back(fmt::format(
        "MIG device {} is gone (its GPU instance was destroyed, or its GPU lost); no more "
        "samples from it",
        mig_->label));
  }
  return outcome;
}

void DeviceReader::probe_mig_mode() {
  const auto mode = device_.mig_mode();
  if (!mode) return;  // the GPU cannot do MIG
  mig_mode_at_start_ = mode->current;
  if (!mode->current) return;
  if (auto devices = device_.mig_devices()) {
    for (const auto& d : *devices) {
      if (auto gi = d.gpu_instance_id()) known_instances_.push_back(*gi);
    }
  }
}

void DeviceReader::check_mig(std::int64_t mono_ns, ReadOutcome& outcome) {
  if (mig_checked_ns_ != 0 && mono_ns - mig_checked_ns_ < kMigCheckNs) return;
  mig_checked_ns_ = mono_ns;
  const unsigned gpu = device_.index();
  const auto mode = device_.mig_mode();
  if (!mode) return;
  if (mode->current != *mig_mode_at_start_ && !mig_mode_reported_) {
    mig_mode_reported_ = true;
    outcome.mig_events.push_back(fmt::format(
        "GPU {}: MIG mode turned {} during the run (it was {} at the start); the MIG devices "
        "sampled are those present at the start",
        gpu, mode->current ? "on" : "off", *mig_mode_at_start_ ? "on" : "off"));
  }
  if (!mode->current) return;
  auto devices = device_.mig_devices();
  if (!devices) return;
  for (const auto& d : *devices) {
    const auto gi = d.gpu_instance_id();
    if (!gi || std::find(known_instances_.begin(), known_instances_.end(), *gi) !=
                   known_instances_.end()) {
      continue;
    }
    known_instances_.push_back(*gi);
    MigIdentity identity;
    identity.parent_index = gpu;
    identity.gpu_instance_id = *gi;
    if (auto name = d.name()) identity.profile = mig_profile_from_name(*name);
    outcome.mig_events.push_back(fmt::format(
        "MIG device {} appeared during the run ({}); it is not sampled: gpuscope samples the MIG "
        "devices present when the run starts",
        mig_label(identity), d.uuid().value_or("no UUID")));
  }
}

}  // namespace gpuscope::collect
