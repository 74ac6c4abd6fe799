// The NVML entry points as values: an enum generated from the one list in nvml/entry_points.hpp, so
// scenario faults can name a call ("nvmlDeviceGetPowerUsage" or "DeviceGetPowerUsage") and the
// per-device fault tables can be plain arrays indexed by it.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "nvml/entry_points.hpp"

namespace gpuscope::sim {

#define GPUSCOPE_SIM_ENTRY_ENUM(id, ...) id,
enum class Entry : std::size_t {
  GPUSCOPE_NVML_ENTRY_POINTS(GPUSCOPE_SIM_ENTRY_ENUM, GPUSCOPE_SIM_ENTRY_ENUM,
                             GPUSCOPE_SIM_ENTRY_ENUM) Count
};
#undef GPUSCOPE_SIM_ENTRY_ENUM

inline constexpr std::size_t kEntryCount = static_cast<std::size_t>(Entry::Count);

// The entry's id as written in the list, e.g. "DeviceGetPowerUsage".
std::string_view entry_id(Entry entry);

// The exported symbols of an entry, newest first, e.g. {"nvmlInit_v2", "nvmlInit"}.
std::span<const std::string_view> entry_symbols(Entry entry);

// Looks an entry up by its id or by any of its symbols; nullopt if the name is neither.
std::optional<Entry> find_entry(std::string_view name);

}  // namespace gpuscope::sim
