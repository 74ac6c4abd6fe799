#include "collect/health_watch.hpp"

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/xid_catalog.hpp"

namespace gpuscope::collect {
namespace {

std::string xid_detail(std::uint64_t xid) {
  return xid <= 0xFFFFFFFFu ? xid_title(static_cast<unsigned>(xid)) : fmt::format("Xid {}", xid);
}

// The driver's own words for the fault event types other than Xids.
struct EventWords {
  std::uint64_t type;
  EventKind kind;
  std::string_view detail;
};
const EventWords kEventWords[] = {
    {nvml::kEventTypeSingleBitEccError, EventKind::Ecc,
     "the driver reported a corrected (single-bit) ECC error"},
    {nvml::kEventTypeDoubleBitEccError, EventKind::Ecc,
     "the driver reported an uncorrected (double-bit) ECC error"},
    {nvml::kEventTypeSingleBitEccErrorStorm, EventKind::Ecc,
     "the driver reported a storm of corrected ECC errors"},
    {nvml::kEventTypeDramRetirementEvent, EventKind::RowRemap,
     "the driver remapped a memory row (or retired a page)"},
    {nvml::kEventTypeDramRetirementFailure, EventKind::RowRemap,
     "the driver failed to remap a memory row: no spare row was left"},
    {nvml::kEventTypeNonFatalPoisonError, EventKind::Ecc,
     "the driver reported a contained (non-fatal) poisoned-memory error"},
    {nvml::kEventTypeFatalPoisonError, EventKind::Ecc,
     "the driver reported a fatal poisoned-memory error"},
    {nvml::kEventTypeGpuUnavailableError, EventKind::GpuLost,
     "the driver reported the GPU unavailable"},
};

std::string recovery_words(std::uint64_t action) {
  switch (action) {
    case 0:
      return "none";
    case 1:
      return "reset the GPU";
    case 2:
      return "reboot the node";
    case 3:
      return "drain peer-to-peer traffic";
    case 4:
      return "drain and reset";
    default:
      return fmt::format("action {}", action);
  }
}

// How much a counter rose between two reads; 0 when either lacks it or it did not rise.
double rise(const HealthRow* before, const HealthRow& now, HealthMetric metric) {
  const auto after = now.get(metric);
  if (!after || before == nullptr) return 0;
  const auto earlier = before->get(metric);
  return earlier && *after > *earlier ? *after - *earlier : 0;
}

bool turned_on(const HealthRow* before, const HealthRow& now, HealthMetric metric) {
  const auto after = now.get(metric);
  if (!after || *after == 0) return false;
  if (before == nullptr) return true;  // already set when the run began: news too
  const auto earlier = before->get(metric);
  return !earlier || *earlier == 0;
}

void ecc_changes(const HealthRow* before, const HealthRow& now, std::vector<Event>& out) {
  const auto add = [&](HealthMetric volatile_metric, HealthMetric aggregate_metric,
                       std::string_view what) {
    // The volatile count when the GPU has it, else the lifetime one.
    const HealthMetric metric = now.get(volatile_metric) ? volatile_metric : aggregate_metric;
    const double delta = rise(before, now, metric);
    if (delta <= 0) return;
    out.push_back({now.wall_ns, now.mono_ns, now.device_index, EventKind::Ecc,
                   fmt::format("{:.0f} {} ECC error{} (total {:.0f})", delta, what,
                               delta == 1 ? "" : "s", *now.get(metric))});
  };
  add(HealthMetric::EccCorrectedVolatile, HealthMetric::EccCorrectedAggregate, "corrected");
  add(HealthMetric::EccUncorrectedVolatile, HealthMetric::EccUncorrectedAggregate, "uncorrected");
}

void remap_changes(const HealthRow* before, const HealthRow& now, std::vector<Event>& out) {
  const auto event = [&](std::string detail) {
    out.push_back(
        {now.wall_ns, now.mono_ns, now.device_index, EventKind::RowRemap, std::move(detail)});
  };
  const double rows = rise(before, now, HealthMetric::RemappedRowsCorrectable) +
                      rise(before, now, HealthMetric::RemappedRowsUncorrectable);
  if (rows > 0) event(fmt::format("{:.0f} memory row{} remapped", rows, rows == 1 ? "" : "s"));
  const double pages = rise(before, now, HealthMetric::RetiredPagesSbe) +
                       rise(before, now, HealthMetric::RetiredPagesDbe);
  if (pages > 0) event(fmt::format("{:.0f} memory page{} retired", pages, pages == 1 ? "" : "s"));
  const char* already = before == nullptr ? " (already when the run began)" : "";
  if (turned_on(before, now, HealthMetric::RowRemapPending)) {
    event(fmt::format("a row remap is pending{}: the GPU needs a reset", already));
  }
  if (turned_on(before, now, HealthMetric::RowRemapFailure)) {
    event(fmt::format("row remapping failed{}: no spare row was left", already));
  }
  if (turned_on(before, now, HealthMetric::RetiredPagesPending)) {
    event(fmt::format("a page retirement is pending{}: the GPU needs a reset", already));
  }
}

void link_changes(const HealthRow* before, const HealthRow& now, std::vector<Event>& out) {
  if (const double replays = rise(before, now, HealthMetric::PcieReplays); replays > 0) {
    out.push_back({now.wall_ns, now.mono_ns, now.device_index, EventKind::PcieReplays,
                   fmt::format("{:.0f} PCIe replay{} (total {:.0f})", replays,
                               replays == 1 ? "" : "s", *now.get(HealthMetric::PcieReplays))});
  }
  const double nvlink = rise(before, now, HealthMetric::NvlinkCrcFlitErrors) +
                        rise(before, now, HealthMetric::NvlinkCrcDataErrors) +
                        rise(before, now, HealthMetric::NvlinkReplayErrors) +
                        rise(before, now, HealthMetric::NvlinkRecoveryErrors);
  if (nvlink > 0) {
    out.push_back({now.wall_ns, now.mono_ns, now.device_index, EventKind::NvlinkErrors,
                   fmt::format("{:.0f} NVLink error{} (CRC, replay or recovery)", nvlink,
                               nvlink == 1 ? "" : "s")});
  }
}

}  // namespace

Event describe_driver_event(const nvml::Event& event, unsigned index) {
  Event out;
  out.wall_ns = wall_now_ns();
  out.mono_ns = mono_now_ns();
  out.device_index = index;
  if (event.type & nvml::kEventTypeXidCriticalError) {
    out.kind = EventKind::Xid;
    out.detail = xid_detail(event.data);
  } else if (event.type & nvml::kEventTypeGpuRecoveryAction) {
    out.kind = EventKind::Xid;
    out.detail =
        fmt::format("{}: the driver asks to {}", xid_detail(154), recovery_words(event.data));
  } else {
    out.kind = EventKind::Other;
    out.detail = fmt::format("NVML event 0x{:x}", event.type);
    for (const auto& words : kEventWords) {
      if (event.type & words.type) {
        out.kind = words.kind;
        out.detail = std::string(words.detail);
        break;
      }
    }
  }
  if (event.gpu_instance_id) {
    out.detail += fmt::format(" (GPU instance {}", *event.gpu_instance_id);
    if (event.compute_instance_id)
      out.detail += fmt::format(", compute instance {}", *event.compute_instance_id);
    out.detail += ")";
  }
  return out;
}

std::vector<Event> health_changes(const HealthRow* before, const HealthRow& now) {
  std::vector<Event> out;
  ecc_changes(before, now, out);
  remap_changes(before, now, out);
  link_changes(before, now, out);
  return out;
}

HealthWatch::HealthWatch(std::vector<HealthReader> readers, std::vector<std::string>& notes)
    : readers_(std::move(readers)), last_(readers_.size()) {
  for (const auto& reader : readers_) {
    if (!reader.any() && !reader.lost()) {
      notes.push_back(
          fmt::format("GPU {}: no health counters (ECC, remapped rows, PCIe "
                      "replays); they will be empty",
                      reader.index()));
    }
  }
  if (!readers_.empty()) register_events(notes);
}

void HealthWatch::register_events(std::vector<std::string>& notes) {
  auto set = nvml::EventSet::create(readers_.front().device().shared_library());
  if (!set) {
    notes.push_back(
        fmt::format("no NVML events ({}); Xids will not be recorded",
                    readers_.front().device().library().error_string(set.error().code)));
    return;
  }
  bool any = false;
  for (const auto& reader : readers_) {
    const auto supported = reader.device().supported_event_types();
    const std::uint64_t mask = supported ? (*supported & kFaultEventTypes) : 0;
    // NOT_SUPPORTED registers none of the types: fall back to the Xids alone.
    if (mask != 0 && (set->register_events(reader.device(), mask) ||
                      set->register_events(reader.device(), nvml::kEventTypeXidCriticalError))) {
      any = true;
    } else {
      notes.push_back(
          fmt::format("GPU {}: no Xid events from the driver; Xids will not be "
                      "recorded",
                      reader.index()));
    }
  }
  if (any) events_ = std::move(*set);
}

std::vector<Event> HealthWatch::poll_events() {
  std::vector<Event> out;
  if (!events_) return out;
  // Each wait delivers one event; a burst is drained, bounded so a storm cannot stall us.
  for (int k = 0; k < 64; ++k) {
    auto event = events_->wait(0);
    if (!event || !*event) break;  // nothing queued, or GPU_IS_LOST (the sampler reports it)
    unsigned index = 0;
    for (const auto& reader : readers_) {
      if (reader.device().handle() == (*event)->device) index = reader.index();
    }
    out.push_back(describe_driver_event(**event, index));
  }
  return out;
}

void HealthWatch::read(std::vector<HealthRow>& rows, std::vector<Event>& events) {
  for (std::size_t k = 0; k < readers_.size(); ++k) {
    HealthRow row;
    row.wall_ns = wall_now_ns();
    row.mono_ns = mono_now_ns();
    readers_[k].read(row);  // a GPU lost midway keeps what it answered before
    if (row.present.none()) continue;
    const HealthRow* before = last_[k] ? &*last_[k] : nullptr;
    for (auto& event : health_changes(before, row)) events.push_back(std::move(event));
    last_[k] = row;
    rows.push_back(std::move(row));
  }
}

}  // namespace gpuscope::collect
