// Reading one sysfs attribute, through a function the caller may replace: tests inject EACCES,
// EIO or a vanished file that a made-up tree run as root cannot produce with chmod.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tl/expected.hpp>

#include "util/small_file.hpp"

namespace gpuscope::node {

// The text of the attribute at path, or why it could not be read (error: its errno).
using ReadFile =
    std::function<tl::expected<std::string, util::SmallFileFailure>(const std::string& path)>;

// The real reader: util::read_small_file, at most one page (what sysfs gives an attribute).
ReadFile sysfs_reader();

// The attribute's text without its trailing newline(s) and blanks.
std::string trimmed(std::string text);

// The unsigned decimal number an attribute holds ("123456\n"), or nullopt for anything else.
std::optional<std::uint64_t> attribute_number(const std::string& text);

}  // namespace gpuscope::node
