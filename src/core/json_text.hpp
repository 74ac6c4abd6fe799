// How gpuscope writes JSON, everywhere: strings are bytes from the outside world (job arguments,
// labels, file names, kernel names, driver strings) and may not be UTF-8, so invalid bytes
// become U+FFFD instead of an exception that would lose the whole output; numbers that are not
// finite (an inf read from a database) become null, as nlohmann's dump and json_number do.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace gpuscope {

// value as JSON text (indent < 0: one line), never throwing for invalid UTF-8.
inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// value as JSON text written to `out` as it is serialised, with no copy of the whole text in
// memory (a 10,000-GPU analysis is tens of MB of it); the same text as json_text.
inline void write_json(std::ostream& out, const nlohmann::json& value, int indent = -1) {
  nlohmann::detail::serializer<nlohmann::json> serializer(
      nlohmann::detail::output_adapter<char>(out), ' ', nlohmann::json::error_handler_t::replace);
  serializer.dump(value, indent >= 0, false, static_cast<unsigned>(std::max(indent, 0)));
}

// A number for hand-written JSON: the shortest text that reads back as v, or null.
inline std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string("null");
}

}  // namespace gpuscope
