#include "node/sysfs_file.hpp"

#include <utility>

#include "util/number_text.hpp"

namespace gpuscope::node {

namespace {
// sysfs attributes are at most one page; a larger file is not an attribute.
constexpr std::size_t kAttributeBytes = 4096;
}  // namespace

ReadFile sysfs_reader() {
  return [](const std::string& path) { return util::read_small_file(path, kAttributeBytes); };
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t' ||
                           text.back() == '\r' || text.back() == '\0')) {
    text.pop_back();
  }
  return text;
}

std::optional<std::uint64_t> attribute_number(const std::string& text) {
  const auto value = util::parse_unsigned(trimmed(text));
  if (!value) return std::nullopt;
  return static_cast<std::uint64_t>(*value);
}

}  // namespace gpuscope::node
