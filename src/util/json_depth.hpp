// How deep a JSON text nests, found by a scan of the raw text (strings skipped), so that a deeply
// nested document is refused before any parse or walk could spend memory or stack on it. Used by
// the scenario parser and the gssr reader.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gpuscope::util {

// The byte offset where text's arrays and objects first nest deeper than max_depth, if they do.
std::optional<std::size_t> nesting_past(std::string_view text, std::size_t max_depth);

}  // namespace gpuscope::util
