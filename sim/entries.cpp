#include "sim/entries.hpp"

#include <array>

namespace gpuscope::sim {
namespace {

struct EntryNames {
  std::string_view id;
  std::array<std::string_view, 3> symbols;
  std::size_t symbol_count;
};

#define GPUSCOPE_SIM_NAMES1(id, req, params, args, s1) {#id, {#s1, {}, {}}, 1},
#define GPUSCOPE_SIM_NAMES2(id, req, params, args, s1, s2) {#id, {#s1, #s2, {}}, 2},
#define GPUSCOPE_SIM_NAMES3(id, req, params, args, s1, s2, s3) {#id, {#s1, #s2, #s3}, 3},
constexpr std::array<EntryNames, kEntryCount> kNames = {
    {GPUSCOPE_NVML_ENTRY_POINTS(GPUSCOPE_SIM_NAMES1, GPUSCOPE_SIM_NAMES2, GPUSCOPE_SIM_NAMES3)}};
#undef GPUSCOPE_SIM_NAMES1
#undef GPUSCOPE_SIM_NAMES2
#undef GPUSCOPE_SIM_NAMES3

const EntryNames& names_of(Entry entry) {
  return kNames.at(static_cast<std::size_t>(entry));
}

}  // namespace

std::string_view entry_id(Entry entry) {
  return names_of(entry).id;
}

std::span<const std::string_view> entry_symbols(Entry entry) {
  const EntryNames& names = names_of(entry);
  return {names.symbols.data(), names.symbol_count};
}

std::optional<Entry> find_entry(std::string_view name) {
  for (std::size_t i = 0; i < kEntryCount; ++i) {
    const auto entry = static_cast<Entry>(i);
    if (entry_id(entry) == name) return entry;
    for (std::string_view symbol : entry_symbols(entry)) {
      if (symbol == name) return entry;
    }
  }
  return std::nullopt;
}

}  // namespace gpuscope::sim
