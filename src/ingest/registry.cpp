// The formats gpuscope imports. A new format is a Format subclass in this folder and one line
// here (ARCHITECTURE.md, "The ingest layer").
#include <fmt/format.h>

#include "core/error.hpp"
#include "ingest/format.hpp"
#include "ingest/logs/dcgmi_dmon_format.hpp"
#include "ingest/logs/log_text.hpp"
#include "ingest/logs/smi_csv_format.hpp"
#include "ingest/logs/smi_dmon_format.hpp"
#include "ingest/logs/smi_query_format.hpp"
#include "ingest/logs/smi_table_format.hpp"
#include "ingest/tools/gssr_format.hpp"

namespace gpuscope::ingest {

std::span<const Format* const> formats() {
  static const GssrFormat gssr;
  static const SmiCsvFormat smi_csv;
  static const SmiDmonFormat smi_dmon;
  static const DcgmiDmonFormat dcgmi_dmon;
  static const SmiTableFormat smi_table;
  static const SmiQueryFormat smi_query;
  static const Format* const all[] = {&gssr,       &smi_csv,   &smi_dmon,
                                      &dcgmi_dmon, &smi_table, &smi_query};
  return all;
}

const Format* format_named(std::string_view name) {
  for (const Format* format : formats()) {
    if (format->name() == name) return format;
  }
  return nullptr;
}

const Format* format_of(const std::filesystem::path& path, const ReadOptions& options) {
  if (!options.format.empty()) {
    const Format* named = format_named(options.format);
    if (named == nullptr) {
      std::string names;
      for (const Format* format : formats())
        names += (names.empty() ? "" : ", ") + std::string(format->name());
      throw Error::usage(fmt::format("--input-format {}: no such format", options.format), {},
                         fmt::format("give one of {}", names));
    }
    // A run database stays one: --input-format is for the inputs that cannot say what they are.
    if (named->recognises(path, options) || is_foreign_text(path)) return named;
  }
  for (const Format* format : formats()) {
    if (format->recognises(path, options)) return format;
  }
  return nullptr;
}

}  // namespace gpuscope::ingest
