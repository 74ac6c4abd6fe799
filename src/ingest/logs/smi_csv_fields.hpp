// The fields of `nvidia-smi --query-gpu=... --format=csv` (docs/logs.md has the table): which
// gpuscope column, health counter or GPU fact each one fills, in which unit, and how a value is
// read ("81.86 W", "81.86", "[N/A]", "[Not Supported]", "0x0000000000000004", "Active",
// "Enabled", "Yes"). Pure functions, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/health.hpp"
#include "core/metrics.hpp"

namespace gpuscope::ingest::smi {

enum class FieldRole {
  Timestamp,  // "2026/11/25 22:40:11.719", local time
  Index,      // the GPU's index on its node
  Uuid,       // GPU-…
  BusId,      // 00000000:00:06.0
  Hostname,   // the node
  Name,       // the GPU's product name
  DriverVersion,
  Metric,       // a samples column (`metric`), value x `scale` from the field's unit
  Health,       // a health_samples column (`health`): a count, a percent or a flag
  ReasonsMask,  // clocks_event_reasons.active: the bitmask, hex
  ReasonBit,    // clocks_event_reasons.<reason>: "Active" / "Not Active" (`bit`)
  MemoryTotal,  // the GPU's memory, MiB
  PowerLimit,   // power.limit: the requested limit (a GPU fact; the limit in force if alone)
  DefaultPowerLimit,
  MinPowerLimit,
  MaxPowerLimit,
  MaxSmClock,
  MaxMemoryClock,
  MaxGraphicsClock,
  NoColumn,  // a field nvidia-smi has and gpuscope does not store (pstate, fan.speed, ...)
};

struct Field {
  std::string_view name;  // nvidia-smi's name (the first one where it has two)
  FieldRole role;
  Metric metric = Metric::PowerW;  // Metric
  std::string_view unit;           // what nvidia-smi prints: "W", "MiB", "MHz", "%", "" (none)
  std::uint64_t bit = 0;           // ReasonBit
  HealthMetric health = HealthMetric::EccEnabled;  // Health
};

// The field `name` stands for (either of nvidia-smi's spellings, `clocks_throttle_reasons.*`
// as `clocks_event_reasons.*`, without a "[unit]" suffix), or nullptr for a name nvidia-smi
// does not have (or gpuscope does not know).
const Field* field_named(std::string_view name);

// A header cell "power.draw [W]" as the name and the unit in brackets (empty without).
struct HeaderCell {
  std::string_view name;
  std::string_view unit;
};
HeaderCell split_header_cell(std::string_view cell);

// Why a value is absent: nvidia-smi's words for it ("N/A", "Not Supported", "Unknown Error",
// "GPU requires reset", ...), without brackets.
struct Absent {
  std::string_view why;
};

// A numeric value of `field` in gpuscope's unit (W, bytes, MHz, %, °C, mJ), read from `text`
// with or without its unit suffix ("81.86 W", "81.86"); `header_unit`: the unit the header
// names, if any. nullopt with `absent` set for [N/A]-like words; nullopt with `absent` empty for
// text that is no value of the field (a malformed log).
std::optional<double> metric_value(const Field& field, std::string_view text,
                                   std::string_view header_unit, std::optional<Absent>& absent);

// A value of a Health `field`: a whole number ≥ 0 ("3", "12 %" for the video engines), or a
// flag's word ("Enabled"/"Disabled", "Yes"/"No") as 1/0. nullopt with `absent` set for
// [N/A]-like words; nullopt with `absent` empty for text that is no value of the field.
std::optional<double> health_value(const Field& field, std::string_view text,
                                   std::string_view header_unit, std::optional<Absent>& absent);

// Whether `field` (named `name` in the log) is one of a GPU's fixed facts, which never change
// for a GPU (name, memory.total, serial, VBIOS, power limits, maximum clocks): log_ticks.hpp.
bool is_fixed_fact(const Field& field, std::string_view name);

// For a GPU's slowly changing levels (temperature, memory used), the difference in gpuscope's
// unit that tells two GPUs apart (1 °C, 256 MiB); nullopt for other fields: log_ticks.hpp.
std::optional<double> level_unit(const Field& field);

// "[N/A]", "N/A", "[Not Supported]", ...: the words, else nullopt.
std::optional<Absent> absent_value(std::string_view text);

// "0x0000000000000004" as the bitmask.
std::optional<std::uint64_t> hex_mask(std::string_view text);

// "Active" / "Not Active": whether the reason is active.
std::optional<bool> reason_active(std::string_view text);

// "2026/11/25 22:40:11.719" (or with '-' between the date's parts, any number of decimals):
// the parts, unconverted.
struct StampParts {
  int year, month, day, hour, minute;
  std::int64_t second_ns;
};
std::optional<StampParts> parse_timestamp(std::string_view text);

}  // namespace gpuscope::ingest::smi
