#include "ingest/logs/smi_csv_fields.hpp"

#include <array>
#include <charconv>
#include <cmath>

#include "core/clock_events.hpp"
#include "ingest/logs/log_text.hpp"

namespace gpuscope::ingest::smi {
namespace {

using R = FieldRole;
using M = Metric;
using H = HealthMetric;

// Every field gpuscope reads, in nvidia-smi's --help-query-gpu order (driver 580). The units are
// those nvidia-smi prints in the header and after the values.
constexpr std::array kFields = std::to_array<Field>({
    {"timestamp", R::Timestamp, M::PowerW, "", 0},
    {"driver_version", R::DriverVersion, M::PowerW, "", 0},
    {"name", R::Name, M::PowerW, "", 0},
    {"uuid", R::Uuid, M::PowerW, "", 0},
    {"pci.bus_id", R::BusId, M::PowerW, "", 0},
    {"index", R::Index, M::PowerW, "", 0},
    {"hostname", R::Hostname, M::PowerW, "", 0},
    {"memory.total", R::MemoryTotal, M::PowerW, "MiB", 0},
    {"memory.reserved", R::Metric, M::MemoryReservedBytes, "MiB", 0},
    {"memory.used", R::Metric, M::MemoryUsedBytes, "MiB", 0},
    {"memory.free", R::Metric, M::MemoryFreeBytes, "MiB", 0},
    {"utilization.gpu", R::Metric, M::GpuUtilPct, "%", 0},
    {"utilization.memory", R::Metric, M::MemUtilPct, "%", 0},
    {"utilization.encoder", R::Health, M::PowerW, "%", 0, H::EncoderUtilPct},
    {"utilization.decoder", R::Health, M::PowerW, "%", 0, H::DecoderUtilPct},
    // The health counters (core/health.hpp): ECC, retired pages, remapped rows.
    {"ecc.mode.current", R::Health, M::PowerW, "", 0, H::EccEnabled},
    {"ecc.errors.corrected.volatile.total", R::Health, M::PowerW, "", 0, H::EccCorrectedVolatile},
    {"ecc.errors.corrected.aggregate.total", R::Health, M::PowerW, "", 0, H::EccCorrectedAggregate},
    {"ecc.errors.uncorrected.volatile.total", R::Health, M::PowerW, "", 0,
     H::EccUncorrectedVolatile},
    {"ecc.errors.uncorrected.aggregate.total", R::Health, M::PowerW, "", 0,
     H::EccUncorrectedAggregate},
    {"retired_pages.single_bit_ecc.count", R::Health, M::PowerW, "", 0, H::RetiredPagesSbe},
    {"retired_pages.double_bit.count", R::Health, M::PowerW, "", 0, H::RetiredPagesDbe},
    {"retired_pages.pending", R::Health, M::PowerW, "", 0, H::RetiredPagesPending},
    {"remapped_rows.correctable", R::Health, M::PowerW, "", 0, H::RemappedRowsCorrectable},
    {"remapped_rows.uncorrectable", R::Health, M::PowerW, "", 0, H::RemappedRowsUncorrectable},
    {"remapped_rows.pending", R::Health, M::PowerW, "", 0, H::RowRemapPending},
    {"remapped_rows.failure", R::Health, M::PowerW, "", 0, H::RowRemapFailure},
    {"temperature.gpu", R::Metric, M::TemperatureC, "", 0},
    {"temperature.memory", R::Metric, M::MemoryTemperatureC, "", 0},
    {"power.draw", R::Metric, M::PowerW, "W", 0},
    {"power.draw.average", R::Metric, M::PowerAverageW, "W", 0},
    {"power.draw.instant", R::Metric, M::PowerInstantW, "W", 0},
    {"module.power.draw.instant", R::Metric, M::ModulePowerW, "W", 0},
    {"module.power.draw.average", R::Metric, M::ModulePowerW, "W", 0},
    {"enforced.power.limit", R::Metric, M::PowerLimitW, "W", 0},
    {"power.limit", R::PowerLimit, M::PowerW, "W", 0},
    {"power.default_limit", R::DefaultPowerLimit, M::PowerW, "W", 0},
    {"power.min_limit", R::MinPowerLimit, M::PowerW, "W", 0},
    {"power.max_limit", R::MaxPowerLimit, M::PowerW, "W", 0},
    {"clocks.current.graphics", R::Metric, M::GraphicsClockMhz, "MHz", 0},
    {"clocks.current.sm", R::Metric, M::SmClockMhz, "MHz", 0},
    {"clocks.current.memory", R::Metric, M::MemClockMhz, "MHz", 0},
    {"clocks.max.graphics", R::MaxGraphicsClock, M::PowerW, "MHz", 0},
    {"clocks.max.sm", R::MaxSmClock, M::PowerW, "MHz", 0},
    {"clocks.max.memory", R::MaxMemoryClock, M::PowerW, "MHz", 0},
    {"clocks_event_reasons.active", R::ReasonsMask, M::PowerW, "", 0},
    {"clocks_event_reasons.gpu_idle", R::ReasonBit, M::PowerW, "", kClockEventGpuIdle},
    {"clocks_event_reasons.applications_clocks_setting", R::ReasonBit, M::PowerW, "",
     kClockEventApplicationsClocksSetting},
    {"clocks_event_reasons.sw_power_cap", R::ReasonBit, M::PowerW, "", kClockEventSwPowerCap},
    {"clocks_event_reasons.hw_slowdown", R::ReasonBit, M::PowerW, "", kClockEventHwSlowdown},
    {"clocks_event_reasons.hw_thermal_slowdown", R::ReasonBit, M::PowerW, "",
     kClockEventHwThermalSlowdown},
    {"clocks_event_reasons.hw_power_brake_slowdown", R::ReasonBit, M::PowerW, "",
     kClockEventHwPowerBrakeSlowdown},
    {"clocks_event_reasons.sw_thermal_slowdown", R::ReasonBit, M::PowerW, "",
     kClockEventSwThermalSlowdown},
    {"clocks_event_reasons.sync_boost", R::ReasonBit, M::PowerW, "", kClockEventSyncBoost},
    // Not an nvidia-smi field (no driver up to 580 prints one); what loggers built on NVML's
    // nvmlDeviceGetTotalEnergyConsumption write, in mJ unless the header says otherwise.
    {"total_energy_consumption", R::Metric, M::EnergyMj, "mJ", 0},
});

// Second spellings nvidia-smi accepts, and the older clocks_throttle_reasons prefix.
struct Alias {
  std::string_view alias;
  std::string_view name;
};
constexpr std::array kAliases = std::to_array<Alias>({
    {"gpu_name", "name"},
    {"gpu_uuid", "uuid"},
    {"gpu_bus_id", "pci.bus_id"},
    {"clocks.gr", "clocks.current.graphics"},
    {"clocks.sm", "clocks.current.sm"},
    {"clocks.mem", "clocks.current.memory"},
    {"clocks.max.gr", "clocks.max.graphics"},
    {"clocks.max.mem", "clocks.max.memory"},
    {"gpu.power.draw.average", "power.draw.average"},
    {"gpu.power.draw.instant", "power.draw.instant"},
    {"gpu.power.requested_limit", "power.limit"},
    {"gpu.power.current_limit", "enforced.power.limit"},
    {"gpu.power.default_limit", "power.default_limit"},
    {"gpu.power.min_limit", "power.min_limit"},
    {"gpu.power.max_limit", "power.max_limit"},
    {"energy.consumption", "total_energy_consumption"},
    {"retired_pages.sbe", "retired_pages.single_bit_ecc.count"},
    {"retired_pages.dbe", "retired_pages.double_bit.count"},
    {"remapped_rows.sbe", "remapped_rows.correctable"},
    {"remapped_rows.dbe", "remapped_rows.uncorrectable"},
});

// Fields (or families, ending in '.') nvidia-smi has and gpuscope has no column for.
constexpr std::array<std::string_view, 40> kNoColumn = {
    "count",
    "serial",
    "gpu_serial",
    "pci.",
    "vgpu_",
    "pcie.link.",
    "display_",
    "persistence_mode",
    "addressing_mode",
    "accounting.",
    "driver_model.",
    "vbios_version",
    "inforom.",
    "gpu_recovery_action",
    "gom.",
    "gpu_operation_mode.",
    "fan.speed",
    "pstate",
    "clocks_event_reasons.supported",
    "clocks_event_reasons_counters.",
    "compute_mode",
    "compute_cap",
    "utilization.",
    "encoder.",
    "dramEncryption.",
    "ecc.",
    "retired_pages.",
    "remapped_rows.",
    "temperature.gpu.tlimit",
    "power.management",
    "module.",
    "power_smoothing.",
    "clocks.",
    "clocks_event_reasons.display_clock_setting",
    "mig.",
    "gsp.",
    "c2c.",
    "protected_memory.",
    "fabric.",
    "platform."};

std::string canonical(std::string_view name) {
  std::string out(trim(name));
  constexpr std::string_view kOld = "clocks_throttle_reasons";
  if (out.rfind(kOld, 0) == 0) out = "clocks_event_reasons" + out.substr(kOld.size());
  for (const auto& a : kAliases) {
    if (out == a.alias) return std::string(a.name);
  }
  return out;
}

// The factor from `unit` to gpuscope's unit of a field printed in `native` (W, MiB, MHz, %, mJ,
// none); nullopt for a unit that is not one of the field's kind.
std::optional<double> unit_factor(std::string_view native, std::string_view unit) {
  if (unit == native) {
    if (native == "MiB") return 1024.0 * 1024.0;
    return 1.0;
  }
  if (native == "W") {
    if (unit == "mW") return 1e-3;
    if (unit == "kW") return 1e3;
  } else if (native == "MiB") {
    // nvidia-smi's MB (dmon and older drivers) are MiB.
    if (unit == "MB") return 1024.0 * 1024.0;
    if (unit == "KiB") return 1024.0;
    if (unit == "GiB") return 1024.0 * 1024.0 * 1024.0;
    if (unit == "B") return 1.0;
  } else if (native == "MHz") {
    if (unit == "GHz") return 1e3;
  } else if (native == "mJ") {
    if (unit == "J") return 1e3;
    if (unit == "kJ") return 1e6;
  } else if (native.empty()) {
    if (unit == "C" || unit == "°C") return 1.0;
  }
  return std::nullopt;
}

}  // namespace

const Field* field_named(std::string_view name) {
  const std::string key = canonical(name);
  for (const auto& f : kFields) {
    if (f.name == key) return &f;
  }
  static constexpr Field kKnown{"", FieldRole::NoColumn, Metric::PowerW, "", 0};
  for (std::string_view known : kNoColumn) {
    const bool family = known.back() == '.' || known.back() == '_';
    if (family ? key.rfind(known, 0) == 0 : key == known) return &kKnown;
  }
  return nullptr;
}

HeaderCell split_header_cell(std::string_view cell) {
  cell = trim(cell);
  HeaderCell out{cell, {}};
  const auto open = cell.rfind('[');
  if (open != std::string_view::npos && cell.back() == ']') {
    out.name = trim(cell.substr(0, open));
    out.unit = trim(cell.substr(open + 1, cell.size() - open - 2));
  }
  return out;
}

std::optional<Absent> absent_value(std::string_view text) {
  text = trim(text);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    return Absent{text.substr(1, text.size() - 2)};
  }
  if (text == "N/A" || text == "n/a" || text.empty() || text == "-") {
    return Absent{text.empty() ? std::string_view("empty") : text};
  }
  return std::nullopt;
}

std::optional<double> metric_value(const Field& field, std::string_view text,
                                   std::string_view header_unit, std::optional<Absent>& absent) {
  absent.reset();
  text = trim(text);
  if (auto why = absent_value(text)) {
    absent = why;
    return std::nullopt;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || !std::isfinite(value)) return std::nullopt;
  std::string_view unit = trim(text.substr(static_cast<std::size_t>(end - text.data())));
  if (unit.empty()) unit = header_unit.empty() ? field.unit : header_unit;
  const auto factor = unit_factor(field.unit, unit);
  if (!factor) return std::nullopt;
  return value * *factor;
}

std::optional<double> health_value(const Field& field, std::string_view text,
                                   std::string_view header_unit, std::optional<Absent>& absent) {
  absent.reset();
  text = trim(text);
  // The flags' words (ecc.mode.current; the pending and failure fields of some drivers).
  if (text == "Enabled" || text == "Yes") return 1.0;
  if (text == "Disabled" || text == "No") return 0.0;
  const auto value = metric_value(field, text, header_unit, absent);
  if (!value || *value < 0 || *value != std::floor(*value)) return std::nullopt;
  if (health_info(field.health).kind == HealthKind::Flag && *value > 1) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> hex_mask(std::string_view text) {
  text = trim(text);
  if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return std::nullopt;
  std::uint64_t mask = 0;
  const auto [end, error] = std::from_chars(text.data() + 2, text.data() + text.size(), mask, 16);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return mask;
}

std::optional<bool> reason_active(std::string_view text) {
  text = trim(text);
  if (text == "Active") return true;
  if (text == "Not Active") return false;
  return std::nullopt;
}

std::optional<StampParts> parse_timestamp(std::string_view text) {
  text = trim(text);
  // YYYY/MM/DD HH:MM:SS[.fff]
  if (text.size() < 19) return std::nullopt;
  const auto number = [&](std::size_t at, std::size_t digits) -> std::optional<int> {
    int value = 0;
    for (std::size_t i = at; i < at + digits; ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      value = value * 10 + (text[i] - '0');
    }
    return value;
  };
  const bool separators = (text[4] == '/' || text[4] == '-') && text[7] == text[4] &&
                          (text[10] == ' ' || text[10] == 'T') && text[13] == ':' &&
                          text[16] == ':';
  const auto y = number(0, 4), mo = number(5, 2), d = number(8, 2), h = number(11, 2),
             mi = number(14, 2), s = number(17, 2);
  if (!separators || !y || !mo || !d || !h || !mi || !s) return std::nullopt;
  std::int64_t fraction_ns = 0;
  if (text.size() > 19) {
    if (text[19] != '.' || text.size() == 20) return std::nullopt;
    std::int64_t scale = 100'000'000;
    for (std::size_t i = 20; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      fraction_ns += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  return StampParts{*y, *mo, *d, *h, *mi, std::int64_t{*s} * 1'000'000'000 + fraction_ns};
}

bool is_fixed_fact(const Field& field, std::string_view name) {
  switch (field.role) {
    case FieldRole::Name:
    case FieldRole::MemoryTotal:
    case FieldRole::DefaultPowerLimit:
    case FieldRole::MinPowerLimit:
    case FieldRole::MaxPowerLimit:
    case FieldRole::MaxSmClock:
    case FieldRole::MaxMemoryClock:
    case FieldRole::MaxGraphicsClock:
      return true;
    case FieldRole::NoColumn:
      return name == "serial" || name == "gpu_serial" || name == "vbios_version" ||
             name == "pci.device_id" || name == "pci.sub_device_id" || name == "inforom.img" ||
             name == "inforom.oem";
    default:
      return false;
  }
}

std::optional<double> level_unit(const Field& field) {
  if (field.role != FieldRole::Metric) return std::nullopt;
  switch (field.metric) {
    case Metric::TemperatureC:
    case Metric::MemoryTemperatureC:
      return 1.0;
    case Metric::MemoryUsedBytes:
      return 256.0 * 1024 * 1024;
    default:
      return std::nullopt;
  }
}

}  // namespace gpuscope::ingest::smi
