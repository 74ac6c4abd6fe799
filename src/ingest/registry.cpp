// The formats gpuscope imports. A new format is a Format subclass in this folder and one line
// here (ARCHITECTURE.md, "The ingest layer").
#include "ingest/format.hpp"
#include "ingest/gssr_format.hpp"

namespace gpuscope::ingest {

std::span<const Format* const> formats() {
  static const GssrFormat gssr;
  static const Format* const all[] = {&gssr};
  return all;
}

const Format* format_of(const std::filesystem::path& path) {
  for (const Format* format : formats()) {
    if (format->recognises(path)) return format;
  }
  return nullptr;
}

}  // namespace gpuscope::ingest
