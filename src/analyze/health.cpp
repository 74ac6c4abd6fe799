#include "analyze/health.hpp"

#include <fmt/format.h>

#include <map>

#include "core/xid_catalog.hpp"

namespace gpuscope::analyze {
namespace {

std::string plural(double n, std::string_view word) {
  return fmt::format("{:.0f} {}{}", n, word, n == 1 ? "" : "s");
}

// ", 1.2 s before the job ended" when `t_s` is that close to its run's end.
std::string before_end(double t_s, std::optional<double> run_end_s) {
  if (!run_end_s || *run_end_s < t_s || *run_end_s - t_s > kEndedAfterS) return "";
  return fmt::format(", {:.1f} s before the job ended", *run_end_s - t_s);
}

struct XidGroup {
  const HealthEvent* first = nullptr;
  std::size_t count = 0;
};

std::string xid_words(unsigned xid, const HealthEvent& first, std::size_t count) {
  std::string head = fmt::format("{}: Xid {}", first.gpu, xid);
  const XidInfo* info = xid_info(xid);
  if (info != nullptr) head += fmt::format(" ({})", info->description);
  head += fmt::format(" at {:.1f} s", first.t_s);
  if (count > 1) head += fmt::format(" ({} times)", count);
  head += before_end(first.t_s, first.run_end_s);
  if (info == nullptr) {
    return head +
           ": not in NVIDIA's Xid catalogue; the kernel log (dmesg) says more: tell the "
           "admins";
  }
  // "...: the GPU's memory (hardware). The GPU found ... Resubmit the job; ..."
  return fmt::format("{}: {}. {} {}", head, xid_cause_word(info->cause), info->meaning,
                     info->action);
}

void xids(const Analysis& a, std::vector<Finding>& out) {
  std::map<std::pair<std::string, unsigned>, XidGroup> groups;
  std::vector<std::pair<std::string, unsigned>> order;
  for (const auto& e : a.health.events) {
    if (e.kind != EventKind::Xid) continue;
    const auto xid = xid_from_title(e.detail);
    if (!xid) continue;
    auto& group = groups[{e.gpu, *xid}];
    if (group.count++ == 0) {
      group.first = &e;
      order.emplace_back(e.gpu, *xid);
    }
  }
  for (const auto& key : order) {
    const XidGroup& group = groups[key];
    out.push_back({"xid", xid_words(key.second, *group.first, group.count)});
  }
}

bool has_xid(const Analysis& a, const std::string& gpu, unsigned xid) {
  for (const auto& e : a.health.events) {
    if (e.kind == EventKind::Xid && e.gpu == gpu && xid_from_title(e.detail) == xid) return true;
  }
  return false;
}

void lost(const Analysis& a, std::vector<Finding>& out) {
  std::optional<double> run_end;
  if (a.runs.size() == 1 && a.runs.front().end_wall_ns > 0) {
    run_end = static_cast<double>(a.runs.front().end_wall_ns - a.t0_wall_ns) * 1e-9;
  }
  for (const auto& gpu : a.lost_gpus) {
    if (has_xid(a, gpu.label, 79)) continue;  // the Xid's finding says it all
    out.push_back(
        {"gpu_lost",
         fmt::format("{} fell off the bus at {:.1f} s{} (GPU_IS_LOST): its data ends there; "
                     "hardware or its PCIe link, not your code (the kernel log has the Xid, "
                     "usually 79): resubmit elsewhere and tell the admins",
                     gpu.label, gpu.t_s, before_end(gpu.t_s, run_end))});
  }
}

// The first event of `kind` on `gpu` whose detail contains `word`, for "first at 3.5 s".
std::string first_at(const Analysis& a, const std::string& gpu, EventKind kind,
                     std::string_view word) {
  for (const auto& e : a.health.events) {
    if (e.kind == kind && e.gpu == gpu && e.detail.find(word) != std::string::npos) {
      return fmt::format(" (first at {:.1f} s)", e.t_s);
    }
  }
  return "";
}

std::optional<double> either(const GpuHealth& g, HealthMetric vol, HealthMetric agg) {
  const auto v = g.rise(vol);
  return v ? v : g.rise(agg);
}

void memory(const Analysis& a, const GpuHealth& g, std::vector<Finding>& out) {
  using M = HealthMetric;
  if (const auto n = either(g, M::EccUncorrectedVolatile, M::EccUncorrectedAggregate);
      n && *n > 0) {
    out.push_back({"ecc_uncorrected",
                   fmt::format("{}: {} during the run{}: the GPU's memory failed (hardware, "
                               "not your code); results computed on it since then are suspect: "
                               "rerun elsewhere and tell the admins",
                               g.gpu, plural(*n, "uncorrected ECC error"),
                               first_at(a, g.gpu, EventKind::Ecc, "uncorrected"))});
  }
  if (g.at_end(M::RowRemapFailure).value_or(0) > 0) {
    out.push_back(
        {"row_remap_failure", fmt::format("{}: row remapping failed, no spare memory row is left "
                                          "(hardware): the GPU should be replaced; tell the admins",
                                          g.gpu)});
  }
  if (g.at_end(M::RowRemapPending).value_or(0) > 0 ||
      g.at_end(M::RetiredPagesPending).value_or(0) > 0) {
    out.push_back({"row_remap_pending",
                   fmt::format("{} has a memory row remap pending{}: it takes effect at the next "
                               "GPU reset, and until then the GPU is not to be trusted; ask the "
                               "admins to reset it (nvidia-smi -r) before the next job",
                               g.gpu, first_at(a, g.gpu, EventKind::RowRemap, "pending"))});
  }
  if (const auto n = either(g, M::EccCorrectedVolatile, M::EccCorrectedAggregate); n && *n > 0) {
    out.push_back({"ecc_corrected",
                   fmt::format("{}: {} during the run: the hardware corrected them, results "
                               "are sound; if they keep coming the memory is wearing: tell the "
                               "admins",
                               g.gpu, plural(*n, "corrected ECC error"))});
  }
}

void links(const GpuHealth& g, std::vector<Finding>& out) {
  using M = HealthMetric;
  const double span_s = std::max(g.last_t_s - g.first_t_s, 1.0);
  if (const auto n = g.rise(M::PcieReplays); n && *n / span_s * 60 >= kPcieReplaysPerMinute) {
    out.push_back(
        {"pcie_replays",
         fmt::format("{}: {} during the run ({:.0f} a minute; more than {:.0f} a "
                     "minute is a fault by DCGM's limits): the PCIe link is retrying "
                     "transfers, a link problem (slot, riser, cable), not your code; "
                     "transfers to and from the GPU slow down: tell the admins",
                     g.gpu, plural(*n, "PCIe replay"), *n / span_s * 60, kPcieReplaysPerMinute)});
  }
  const double crc =
      g.rise(M::NvlinkCrcFlitErrors).value_or(0) + g.rise(M::NvlinkCrcDataErrors).value_or(0);
  const double other =
      g.rise(M::NvlinkReplayErrors).value_or(0) + g.rise(M::NvlinkRecoveryErrors).value_or(0);
  if (other > 0 || crc / span_s >= kNvlinkCrcErrorsPerSecond) {
    out.push_back({"nvlink_errors",
                   fmt::format("{}: {} during the run ({:.0f} CRC, {:.0f} replay or recovery): "
                               "an NVLink problem here or at its peer (hardware), which slows "
                               "or stops collective communication: tell the admins if it "
                               "repeats",
                               g.gpu, plural(crc + other, "NVLink error"), crc, other)});
  }
}

// Time the hardware held a GPU down for a reason outside the job: a finding from a second on.
void slowdowns(const GpuHealth& g, std::vector<Finding>& out) {
  const struct {
    HealthMetric metric;
    const char* kind;
    const char* words;  // after the GPU's label, before the seconds
    const char* cause;
  } kSlowdowns[] = {
      {HealthMetric::ViolationHwThermalNs, "hw_thermal_slowdown",
       "was slowed by the hardware for overheating for",
       "a cooling problem (fans, airflow, the room), not your code: tell the admins"},
      {HealthMetric::ViolationPowerBrakeNs, "power_brake", "was held down by the power brake for",
       "a signal from outside the GPU (the node's power supply), not your code: tell the admins"},
  };
  for (const auto& slowdown : kSlowdowns) {
    const auto ns = g.rise(slowdown.metric);
    if (!ns || *ns * 1e-9 < kHardwareSlowdownS) continue;
    out.push_back({slowdown.kind, fmt::format("{} {} {:.1f} s: {}", g.gpu, slowdown.words,
                                              *ns * 1e-9, slowdown.cause)});
  }
}

}  // namespace

std::optional<double> GpuHealth::rise(HealthMetric metric) const {
  const auto i = static_cast<std::size_t>(metric);
  if (!first[i] || !last[i]) return std::nullopt;
  return std::max(0.0, *last[i] - *first[i]);
}

std::vector<Finding> health_findings(const Analysis& a) {
  std::vector<Finding> out;
  xids(a, out);
  lost(a, out);
  for (const auto& g : a.health.gpus) memory(a, g, out);
  for (const auto& g : a.health.gpus) links(g, out);
  for (const auto& g : a.health.gpus) slowdowns(g, out);
  return out;
}

}  // namespace gpuscope::analyze
