#include "exporter/monitor_view.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ctime>

#include "core/clock_events.hpp"
#include "core/mig.hpp"
#include "core/xid_catalog.hpp"

namespace gpuscope::exporter {
namespace {

std::string cell(std::optional<double> value, const char* format_spec) {
  if (!value) return "-";
  return fmt::format(fmt::runtime(format_spec), *value);
}

std::string energy_text(std::optional<double> joules) {
  if (!joules) return "-";
  if (*joules < 10'000) return fmt::format("{:.0f} J", *joules);
  if (*joules < 10'000'000) return fmt::format("{:.1f} kJ", *joules / 1e3);
  return fmt::format("{:.2f} MJ", *joules / 1e6);
}

std::string iso_time(std::int64_t wall_ns) {
  const std::time_t seconds = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[40];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03}Z", buffer, (wall_ns / 1'000'000) % 1000);
}

// What marks a GPU in the table: Xids seen, a row remap pending or failed; empty: healthy.
std::string health_alert(const GpuReading& gpu) {
  std::vector<std::string> parts;
  if (gpu.xid_events > 0) {
    parts.push_back(gpu.xid_events == 1 ? xid_title(gpu.last_xid)
                                        : fmt::format("{} Xids, the last {}", gpu.xid_events,
                                                      xid_title(gpu.last_xid)));
  }
  if (gpu.health.get(HealthMetric::RowRemapPending).value_or(0) > 0) {
    parts.push_back("row remap pending: reset the GPU before trusting it");
  }
  if (gpu.health.get(HealthMetric::RowRemapFailure).value_or(0) > 0) {
    parts.push_back("row remapping failed");
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

std::string short_clock_reasons(std::uint64_t reasons) {
  return short_clock_event_reasons(reasons);
}

std::string monitor_table(const Snapshot& snapshot) {
  std::string out = fmt::format(
      "{:<4} {:>5} {:>5} {:>6} {:>5} {:>15} {:>9} {:>5} {:>15} {:>8}  {}\n", "GPU", "util", "SM",
      "tensor", "DRAM", "power / cap", "energy", "temp", "memory", "SM clk", "throttle");
  std::string alerts;
  for (const GpuReading& gpu : snapshot.gpus) {
    const SampleRow& r = gpu.latest;
    const std::string alert = health_alert(gpu);
    // A GPU with a fault is marked "!" and said under the table.
    // A MIG device under its GPU: "└3" for GPU instance 3 (docs/mig.md).
    const unsigned shown = gpu.identity.index;
    const std::string index =
        is_mig_device_index(shown)
            ? fmt::format("└{}", (shown - kMigIndexBase) % 100)
            : fmt::format("{}{}", gpu.identity.index, alert.empty() ? "" : "!");
    if (!alert.empty()) alerts += fmt::format("! GPU {}: {}\n", gpu.identity.index, alert);
    if (gpu.lost) {
      out += fmt::format("{:<4} lost (fell off the bus)\n", index);
      continue;
    }
    const auto power = r.get(Metric::PowerW);
    const auto cap =
        r.get(Metric::PowerLimitW) ? r.get(Metric::PowerLimitW) : gpu.identity.power_limit_w;
    const std::string power_text =
        fmt::format("{} / {}", cell(power, "{:.0f}"), cell(cap, "{:.0f} W"));
    const auto used = r.get(Metric::MemoryUsedBytes);
    std::optional<double> total;
    if (gpu.identity.memory_total_bytes) {
      total = static_cast<double>(*gpu.identity.memory_total_bytes);
    }
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    const std::string memory_text =
        fmt::format("{} / {}", cell(used ? std::optional(*used / kGiB) : std::nullopt, "{:.1f}"),
                    cell(total ? std::optional(*total / kGiB) : std::nullopt, "{:.0f} GiB"));
    const auto reasons = r.get(Metric::ClockEventReasons);
    out += fmt::format(
        "{:<4} {:>5} {:>5} {:>6} {:>5} {:>15} {:>9} {:>5} {:>15} {:>8}  {}\n", index,
        cell(r.get(Metric::GpuUtilPct), "{:.0f}%"), cell(r.get(Metric::SmActivePct), "{:.0f}%"),
        cell(r.get(Metric::TensorActivePct), "{:.0f}%"),
        cell(r.get(Metric::DramActivePct), "{:.0f}%"), power_text,
        energy_text(gpu.energy_since_start_j()), cell(r.get(Metric::TemperatureC), "{:.0f}°C"),
        memory_text, cell(r.get(Metric::SmClockMhz), "{:.0f} MHz"),
        reasons ? short_clock_reasons(static_cast<std::uint64_t>(*reasons)) : "-");
  }
  return out + alerts;
}

nlohmann::json monitor_json(const Snapshot& snapshot) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuReading& gpu : snapshot.gpus) {
    nlohmann::json g;
    const GpuIdentity& id = gpu.identity;
    g["gpu"] = id.index;
    g["uuid"] = id.mig ? id.mig_uuid : id.uuid;
    g["name"] = id.mig ? id.mig_name : id.name;
    if (id.mig) {
      g["mig"] = {
          {"parent_index", id.mig->parent_index},
          {"parent_uuid", id.uuid},
          {"gpu_instance_id", id.mig->gpu_instance_id},
          {"profile", id.mig->profile ? nlohmann::json(*id.mig->profile) : nlohmann::json()}};
    }
    g["lost"] = gpu.lost;
    g["wall_ns"] = gpu.samples > 0 ? nlohmann::json(gpu.latest.wall_ns) : nlohmann::json();
    for (const auto& metric : kMetrics) {
      const auto value = gpu.latest.get(metric.id);
      g[std::string(metric.name)] = value ? nlohmann::json(*value) : nlohmann::json();
    }
    const auto energy = gpu.energy_since_start_j();
    g["energy_since_start_j"] = energy ? nlohmann::json(*energy) : nlohmann::json();
    g["memory_total_bytes"] = gpu.identity.memory_total_bytes
                                  ? nlohmann::json(*gpu.identity.memory_total_bytes)
                                  : nlohmann::json();
    const auto reasons = gpu.latest.get(Metric::ClockEventReasons);
    g["last_xid"] = gpu.xid_events > 0 ? nlohmann::json(gpu.last_xid) : nlohmann::json();
    g["xid_events"] = gpu.xid_events;
    const auto pending = gpu.health.get(HealthMetric::RowRemapPending);
    g["row_remap_pending"] = pending ? nlohmann::json(*pending > 0) : nlohmann::json();
    const std::string alert = health_alert(gpu);
    g["health_alert"] = alert.empty() ? nlohmann::json() : nlohmann::json(alert);
    g["clock_event_reasons_text"] =
        reasons ? nlohmann::json(short_clock_reasons(static_cast<std::uint64_t>(*reasons)))
                : nlohmann::json();
    gpus.push_back(std::move(g));
  }
  return {{"time", iso_time(snapshot.taken_wall_ns)}, {"gpus", std::move(gpus)}};
}

std::string InPlaceFrame::redraw(const std::string& frame) {
  std::string out;
  // Back to the first line of the previous frame, then overwrite each line, clearing what the
  // old one had beyond the new one's end; nothing is erased before it is replaced (no flicker).
  if (lines_ > 0) out += fmt::format("\r\033[{}A", lines_);
  std::size_t lines = 0;
  std::size_t start = 0;
  while (start < frame.size()) {
    std::size_t end = frame.find('\n', start);
    if (end == std::string::npos) end = frame.size();
    out.append(frame, start, end - start);
    out += "\033[K\n";
    ++lines;
    start = end + 1;
  }
  if (lines < lines_) out += "\033[J";  // a shorter frame: clear what is left below
  lines_ = lines;
  return out;
}

}  // namespace gpuscope::exporter
