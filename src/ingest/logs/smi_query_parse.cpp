#include "ingest/logs/smi_query_parse.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>

#include "core/clock_events.hpp"
#include "ingest/logs/log_text.hpp"
#include "util/number_text.hpp"

namespace gpuscope::ingest::smi_query {
namespace {

using M = Metric;
using H = HealthMetric;

constexpr double kMiB = 1024.0 * 1024.0;

// What a value of a field is: a number with a unit, a count, or a word.
enum class Kind { Number, YesNo, EnabledDisabled };

struct Field {
  std::string_view path;
  bool health;  // a HealthRow's metric, else a SampleRow's
  M metric;
  H health_metric;
  Kind kind;
  std::string_view unit;  // after the number; empty: a count
  double scale;
};

// Every key gpuscope reads into a sample or health row, in nvidia-smi -q's order. Where drivers
// named one value differently, each name is a row of the same metric: the first the GPU has is
// read. "Average Power Draw" is NVML's power usage, which power_w is elsewhere (a 1 s average
// since Ampere); drivers that print both also print "Power Draw" first.
constexpr std::array kFields = std::to_array<Field>({
    {"PCI/Replays Since Reset", true, M::PowerW, H::PcieReplays, Kind::Number, "", 1},
    {"FB Memory Usage/Reserved", false, M::MemoryReservedBytes, H::PcieReplays, Kind::Number, "MiB",
     kMiB},
    {"FB Memory Usage/Used", false, M::MemoryUsedBytes, H::PcieReplays, Kind::Number, "MiB", kMiB},
    {"FB Memory Usage/Free", false, M::MemoryFreeBytes, H::PcieReplays, Kind::Number, "MiB", kMiB},
    {"Utilization/GPU", false, M::GpuUtilPct, H::PcieReplays, Kind::Number, "%", 1},
    {"Utilization/Gpu", false, M::GpuUtilPct, H::PcieReplays, Kind::Number, "%", 1},
    {"Utilization/Memory", false, M::MemUtilPct, H::PcieReplays, Kind::Number, "%", 1},
    {"Utilization/Encoder", true, M::PowerW, H::EncoderUtilPct, Kind::Number, "%", 1},
    {"Utilization/Decoder", true, M::PowerW, H::DecoderUtilPct, Kind::Number, "%", 1},
    {"ECC Mode/Current", true, M::PowerW, H::EccEnabled, Kind::EnabledDisabled, "", 1},
    {"Ecc Mode/Current", true, M::PowerW, H::EccEnabled, Kind::EnabledDisabled, "", 1},
    {"Retired Pages/Single Bit ECC", true, M::PowerW, H::RetiredPagesSbe, Kind::Number, "", 1},
    {"Retired Pages/Double Bit ECC", true, M::PowerW, H::RetiredPagesDbe, Kind::Number, "", 1},
    {"Retired Pages/Pending Page Blacklist", true, M::PowerW, H::RetiredPagesPending, Kind::YesNo,
     "", 1},
    {"Retired Pages/Pending Page Retirement", true, M::PowerW, H::RetiredPagesPending, Kind::YesNo,
     "", 1},
    {"Remapped Rows/Correctable Error", true, M::PowerW, H::RemappedRowsCorrectable, Kind::Number,
     "", 1},
    {"Remapped Rows/Uncorrectable Error", true, M::PowerW, H::RemappedRowsUncorrectable,
     Kind::Number, "", 1},
    {"Remapped Rows/Pending", true, M::PowerW, H::RowRemapPending, Kind::YesNo, "", 1},
    {"Remapped Rows/Remapping Failure Occurred", true, M::PowerW, H::RowRemapFailure, Kind::YesNo,
     "", 1},
    {"Temperature/GPU Current Temp", false, M::TemperatureC, H::PcieReplays, Kind::Number, "C", 1},
    {"Temperature/Memory Current Temp", false, M::MemoryTemperatureC, H::PcieReplays, Kind::Number,
     "C", 1},
    {"GPU Power Readings/Power Draw", false, M::PowerW, H::PcieReplays, Kind::Number, "W", 1},
    {"Power Readings/Power Draw", false, M::PowerW, H::PcieReplays, Kind::Number, "W", 1},
    {"GPU Power Readings/Average Power Draw", false, M::PowerW, H::PcieReplays, Kind::Number, "W",
     1},
    {"GPU Power Readings/Average Power Draw", false, M::PowerAverageW, H::PcieReplays, Kind::Number,
     "W", 1},
    {"GPU Power Readings/Instantaneous Power Draw", false, M::PowerInstantW, H::PcieReplays,
     Kind::Number, "W", 1},
    {"GPU Power Readings/Current Power Limit", false, M::PowerLimitW, H::PcieReplays, Kind::Number,
     "W", 1},
    {"Power Readings/Enforced Power Limit", false, M::PowerLimitW, H::PcieReplays, Kind::Number,
     "W", 1},
    {"Module Power Readings/Power Draw", false, M::ModulePowerW, H::PcieReplays, Kind::Number, "W",
     1},
    {"Module Power Readings/Average Power Draw", false, M::ModulePowerW, H::PcieReplays,
     Kind::Number, "W", 1},
    {"Module Power Readings/Instantaneous Power Draw", false, M::ModulePowerW, H::PcieReplays,
     Kind::Number, "W", 1},
    {"Clocks/Graphics", false, M::GraphicsClockMhz, H::PcieReplays, Kind::Number, "MHz", 1},
    {"Clocks/SM", false, M::SmClockMhz, H::PcieReplays, Kind::Number, "MHz", 1},
    {"Clocks/Memory", false, M::MemClockMhz, H::PcieReplays, Kind::Number, "MHz", 1},
});

// The keys of the GPU's facts (describe_gpu), for left_out_name.
constexpr std::array<std::string_view, 20> kFactPaths = {
    "Product Name",
    "Product Architecture",
    "GPU UUID",
    "PCI/Bus Id",
    "FB Memory Usage/Total",
    "MIG Mode/Current",
    "GPU Power Readings/Requested Power Limit",
    "Power Readings/Power Limit",
    "GPU Power Readings/Default Power Limit",
    "Power Readings/Default Power Limit",
    "GPU Power Readings/Min Power Limit",
    "Power Readings/Min Power Limit",
    "GPU Power Readings/Max Power Limit",
    "Power Readings/Max Power Limit",
    "Max Clocks/Graphics",
    "Max Clocks/SM",
    "Max Clocks/Memory",
    "Processes",
    "Clocks Event Reasons",
    "Clocks Throttle Reasons",
};

// The clock-event reasons as nvidia-smi -q names them (core/clock_events.hpp's bits).
struct Reason {
  std::string_view name;
  std::uint64_t bit;
};
constexpr std::array kReasons = std::to_array<Reason>({
    {"Idle", kClockEventGpuIdle},
    {"Applications Clocks Setting", kClockEventApplicationsClocksSetting},
    {"SW Power Cap", kClockEventSwPowerCap},
    {"HW Slowdown", kClockEventHwSlowdown},
    {"HW Thermal Slowdown", kClockEventHwThermalSlowdown},
    {"HW Power Brake Slowdown", kClockEventHwPowerBrakeSlowdown},
    {"Sync Boost", kClockEventSyncBoost},
    {"SW Thermal Slowdown", kClockEventSwThermalSlowdown},
    {"Display Clock Setting", kClockEventDisplayClockSetting},
});

// The words nvidia-smi prints for a value it has not: "N/A", "[N/A]" (a GPU that should have it
// but did not say), "Not Supported", "Unknown Error", "Insufficient Permissions".
bool is_absent_word(std::string_view text) {
  if (text.size() > 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  for (std::string_view word : {"N/A", "Not Supported", "Unknown Error", "Insufficient Permissions",
                                "Not Available", "Not Found"}) {
    if (text == word) return true;
  }
  return false;
}

// The value of `text` as `kind` with `unit`: the number, or nullopt with the absent word in
// `absent`, or with `bad` set.
std::optional<double> value_of(std::string_view text, Kind kind, std::string_view unit,
                               std::string& absent, bool& bad) {
  bad = false;
  text = trim(text);
  if (is_absent_word(text)) {
    absent = std::string(text);
    return std::nullopt;
  }
  if (kind == Kind::YesNo && (text == "Yes" || text == "No")) return text == "Yes" ? 1 : 0;
  if (kind == Kind::EnabledDisabled && (text == "Enabled" || text == "Disabled")) {
    return text == "Enabled" ? 1 : 0;
  }
  if (kind != Kind::Number) {
    bad = true;
    return std::nullopt;
  }
  std::string_view number = text;
  if (!unit.empty()) {
    const std::size_t blank = text.rfind(' ');
    if (blank == std::string_view::npos || text.substr(blank + 1) != unit) {
      bad = true;
      return std::nullopt;
    }
    number = trim(text.substr(0, blank));
  }
  const auto value = util::parse_finite_number(number);
  if (!value) bad = true;
  return value;
}

std::string expected(Kind kind, std::string_view unit) {
  if (kind == Kind::YesNo) return "Yes or No";
  if (kind == Kind::EnabledDisabled) return "Enabled or Disabled";
  return unit.empty() ? std::string("a count") : fmt::format("a number in {}", unit);
}

const QueryGpu::Value* find(const QueryGpu& gpu, std::string_view path) {
  const auto at = gpu.values.find(path);
  return at == gpu.values.end() ? nullptr : &at->second;
}

// The clock-event reasons: the bits of those Active, under "Clocks Event Reasons" (530 and later;
// HW Thermal and HW Power Brake nested under HW Slowdown) or "Clocks Throttle Reasons".
bool read_reasons(const QueryGpu& gpu, GpuReadings& out, std::string& why, std::size_t& line) {
  for (std::string_view section : {"Clocks Event Reasons", "Clocks Throttle Reasons"}) {
    const std::string prefix = std::string(section) + "/";
    std::uint64_t mask = 0;
    std::string absent;
    bool any = false;
    for (auto it = gpu.values.lower_bound(prefix);
         it != gpu.values.end() && it->first.rfind(prefix, 0) == 0; ++it) {
      const std::string_view name = std::string_view(it->first).substr(it->first.rfind('/') + 1);
      const Reason* reason = nullptr;
      for (const auto& r : kReasons) reason = r.name == name ? &r : reason;
      if (reason == nullptr) continue;  // a reason gpuscope has no bit for: left_out_name
      any = true;
      const std::string_view text = trim(it->second.text);
      if (text == "Active") {
        mask |= reason->bit;
      } else if (is_absent_word(text)) {
        absent = std::string(text);
      } else if (text != "Not Active") {
        why = fmt::format("'{}' is no state of the clock event reason {} (Active or Not Active)",
                          text, name);
        line = it->second.line;
        return false;
      }
    }
    const QueryGpu::Value* whole = find(gpu, section);
    if (!any && whole == nullptr) continue;
    if (!any) absent = trim(whole->text);
    if (absent.empty()) {
      out.row.set(M::ClockEventReasons, static_cast<double>(mask));
    } else {
      out.absent.emplace_back(std::string(section), absent);
    }
    return true;
  }
  return true;
}

// One of the ECC error totals: the sum of the counts under "ECC Errors/<scope>/" that are
// `uncorrectable` or not: SRAM and DRAM counts (Ampere and later; Hopper's two SRAM uncorrectable
// kinds summed), or the "Single Bit"/"Double Bit" sections' "Total" (Volta and before).
bool read_ecc(const QueryGpu& gpu, std::string_view scope, bool uncorrectable, H metric,
              GpuReadings& out, std::string& why, std::size_t& line) {
  const std::string prefix = fmt::format("ECC Errors/{}/", scope);
  double sum = 0;
  bool any = false;
  std::string absent;
  for (auto it = gpu.values.lower_bound(prefix);
       it != gpu.values.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const std::string_view rest = std::string_view(it->first).substr(prefix.size());
    bool counted = false;
    if (rest.rfind("Single Bit/", 0) == 0 || rest.rfind("Double Bit/", 0) == 0) {
      counted = rest.ends_with("/Total") && (rest.front() == 'D') == uncorrectable;
    } else if (rest.find('/') == std::string_view::npos) {
      const bool unc = rest.find("Uncorrectable") != std::string_view::npos;
      counted = unc == uncorrectable && (unc || rest.find("Correctable") != std::string_view::npos);
    }
    if (!counted) continue;
    any = true;
    bool bad = false;
    std::string word;
    const auto v = value_of(it->second.text, Kind::Number, "", word, bad);
    if (bad) {
      why = fmt::format("'{}' is no count of ECC errors ({})", trim(it->second.text), it->first);
      line = it->second.line;
      return false;
    }
    if (v) sum += *v;
    if (!v) absent = word;
  }
  const QueryGpu::Value* whole = find(gpu, "ECC Errors");
  const std::string field =
      fmt::format("ECC Errors {} {}", scope, uncorrectable ? "uncorrectable" : "correctable");
  if (!any && whole != nullptr) absent = trim(whole->text);
  if (!any && absent.empty()) return true;
  if (absent.empty()) {
    out.health.set(metric, sum);
  } else {
    out.absent.emplace_back(field, absent);
  }
  return true;
}

bool read_fields(const QueryGpu& gpu, GpuReadings& out, std::string& why, std::size_t& line) {
  std::array<bool, kMetricCount> sample_done{};
  std::array<bool, kHealthMetricCount> health_done{};
  for (const Field& f : kFields) {
    bool& done = f.health ? health_done[static_cast<std::size_t>(f.health_metric)]
                          : sample_done[static_cast<std::size_t>(f.metric)];
    const QueryGpu::Value* v = done ? nullptr : find(gpu, f.path);
    if (v == nullptr) continue;
    done = true;
    std::string absent;
    bool bad = false;
    const auto value = value_of(v->text, f.kind, f.unit, absent, bad);
    if (bad) {
      why = fmt::format("'{}' is no value of {} ({}, or N/A)", trim(v->text), f.path,
                        expected(f.kind, f.unit));
      line = v->line;
      return false;
    }
    if (!value) {
      out.absent.emplace_back(std::string(f.path), absent);
    } else if (f.health) {
      out.health.set(f.health_metric, *value * f.scale);
    } else {
      out.row.set(f.metric, *value * f.scale);
    }
  }
  return true;
}

// A fact's number at the first of `paths` the GPU has; nullopt when absent.
bool fact(const QueryGpu& gpu, std::initializer_list<std::string_view> paths, std::string_view unit,
          std::optional<double>& out, std::string& why, std::size_t& line) {
  for (std::string_view path : paths) {
    const QueryGpu::Value* v = find(gpu, path);
    if (v == nullptr) continue;
    std::string absent;
    bool bad = false;
    out = value_of(v->text, Kind::Number, unit, absent, bad);
    if (bad) {
      why = fmt::format("'{}' is no value of {} ({}, or N/A)", trim(v->text), path,
                        expected(Kind::Number, unit));
      line = v->line;
      return false;
    }
    return true;
  }
  return true;
}

std::optional<std::string> text_fact(const QueryGpu& gpu, std::string_view path) {
  const QueryGpu::Value* v = find(gpu, path);
  if (v == nullptr || trim(v->text).empty() || is_absent_word(trim(v->text))) return std::nullopt;
  return std::string(trim(v->text));
}

std::optional<unsigned> whole(const std::optional<double>& v) {
  if (!v || *v < 0 || *v > 1e6) return std::nullopt;
  return static_cast<unsigned>(std::lround(*v));
}

}  // namespace

std::optional<KeyLine> split_key_line(std::string_view line) {
  KeyLine k;
  while (k.indent < line.size() && (line[k.indent] == ' ' || line[k.indent] == '\t')) ++k.indent;
  const std::string_view text = trim(line.substr(k.indent));
  if (text.empty()) return std::nullopt;
  // The key ends at the first " :" followed by a blank or the end ("Bus Id : 00000000:07:00.0").
  for (std::size_t at = text.find(" :"); at != std::string_view::npos;
       at = text.find(" :", at + 1)) {
    if (at + 2 == text.size() || text[at + 2] == ' ') {
      k.key = trim(text.substr(0, at));
      k.value = trim(text.substr(at + 2));
      k.has_value = true;
      return k;
    }
  }
  k.key = text;
  return k;
}

std::optional<std::string> parse_gpu_line(std::string_view text) {
  text = trim(text);
  if (text.rfind("GPU ", 0) != 0) return std::nullopt;
  const std::string_view bus = text.substr(4);
  // domain:bus:device.function, hex: "00000000:07:00.0" (or "0000:07:00.0").
  const std::size_t c1 = bus.find(':'), c2 = bus.rfind(':'), dot = bus.rfind('.');
  if (c1 == std::string_view::npos || c1 == c2 || dot == std::string_view::npos || dot < c2 ||
      c1 < 4 || c1 > 8 || c2 - c1 != 3 || dot - c2 != 3 || bus.size() != dot + 2) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < bus.size(); ++i) {
    const char c = bus[i];
    if (i == c1 || i == c2 || i == dot) continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return std::string(bus);
}

bool read_gpu(const QueryGpu& gpu, GpuReadings& out, std::string& why, std::size_t& line) {
  return read_fields(gpu, out, why, line) && read_reasons(gpu, out, why, line) &&
         read_ecc(gpu, "Volatile", false, H::EccCorrectedVolatile, out, why, line) &&
         read_ecc(gpu, "Volatile", true, H::EccUncorrectedVolatile, out, why, line) &&
         read_ecc(gpu, "Aggregate", false, H::EccCorrectedAggregate, out, why, line) &&
         read_ecc(gpu, "Aggregate", true, H::EccUncorrectedAggregate, out, why, line);
}

bool describe_gpu(const QueryGpu& gpu, DeviceDescription& d, std::string& why, std::size_t& line) {
  d.name = text_fact(gpu, "Product Name");
  d.uuid = text_fact(gpu, "GPU UUID");
  d.architecture = text_fact(gpu, "Product Architecture");
  d.pci_bus_id = text_fact(gpu, "PCI/Bus Id");
  if (!d.pci_bus_id) d.pci_bus_id = gpu.bus_id;
  if (const auto mig = text_fact(gpu, "MIG Mode/Current")) {
    if (*mig == "Enabled" || *mig == "Disabled") d.mig_enabled = *mig == "Enabled";
  }
  std::optional<double> total, graphics, sm, memory;
  const bool ok =
      fact(gpu, {"FB Memory Usage/Total"}, "MiB", total, why, line) &&
      fact(gpu, {"GPU Power Readings/Current Power Limit", "Power Readings/Enforced Power Limit"},
           "W", d.enforced_power_limit_w, why, line) &&
      fact(gpu, {"GPU Power Readings/Requested Power Limit", "Power Readings/Power Limit"}, "W",
           d.power_limit_w, why, line) &&
      fact(gpu, {"GPU Power Readings/Default Power Limit", "Power Readings/Default Power Limit"},
           "W", d.default_power_limit_w, why, line) &&
      fact(gpu, {"GPU Power Readings/Min Power Limit", "Power Readings/Min Power Limit"}, "W",
           d.min_power_limit_w, why, line) &&
      fact(gpu, {"GPU Power Readings/Max Power Limit", "Power Readings/Max Power Limit"}, "W",
           d.max_power_limit_w, why, line) &&
      fact(gpu, {"Max Clocks/Graphics"}, "MHz", graphics, why, line) &&
      fact(gpu, {"Max Clocks/SM"}, "MHz", sm, why, line) &&
      fact(gpu, {"Max Clocks/Memory"}, "MHz", memory, why, line);
  if (!ok) return false;
  if (total && *total >= 0) d.memory_total_bytes = static_cast<std::uint64_t>(*total * kMiB);
  d.max_graphics_clock_mhz = whole(graphics);
  d.max_sm_clock_mhz = whole(sm);
  d.max_memory_clock_mhz = whole(memory);
  return true;
}

std::optional<double> process_memory(const QueryProcess& p, std::string& absent, bool& bad) {
  if (!p.has_memory) {
    absent = "not printed";
    bad = false;
    return std::nullopt;
  }
  const auto v = value_of(p.memory, Kind::Number, "MiB", absent, bad);
  if (v && *v < 0) bad = true;
  return v && *v >= 0 ? std::optional<double>(*v * kMiB) : std::nullopt;
}

std::string left_out_name(std::string_view path) {
  const std::string_view top = path.substr(0, path.find('/'));
  bool section_read = false;
  auto reads = [&](std::string_view mapped) {
    if (mapped == path) return true;
    if (mapped.substr(0, mapped.find('/')) == top) section_read = true;
    return false;
  };
  for (const Field& f : kFields) {
    if (reads(f.path)) return {};
  }
  for (std::string_view p : kFactPaths) {
    if (reads(p)) return {};
  }
  if (top == "Processes") return {};
  if (top == "Clocks Event Reasons" || top == "Clocks Throttle Reasons") {
    const std::string_view name = path.substr(path.rfind('/') + 1);
    for (const auto& r : kReasons) {
      if (r.name == name) return {};
    }
    return std::string(path);
  }
  const bool summed =
      path.rfind("ECC Errors/Volatile/", 0) == 0 || path.rfind("ECC Errors/Aggregate/", 0) == 0;
  // The counts summed (and the parts of the old layout's "Total"s) are read.
  if (summed && (path.find("orrectable") != std::string_view::npos ||
                 path.find("/Single Bit/") != std::string_view::npos ||
                 path.find("/Double Bit/") != std::string_view::npos)) {
    return {};
  }
  if (summed) return std::string(path);  // "ECC Errors/Aggregate/SRAM Threshold Exceeded"
  if (!section_read && top != "ECC Errors") return std::string(top);
  // A key of a section gpuscope reads, by its path down to the second level.
  const std::size_t second = path.find('/', top.size() + 1);
  return std::string(path.substr(0, second));
}

}  // namespace gpuscope::ingest::smi_query
