// Loads lib/gpuscope/libgpuscope_yaml.so (yaml-cpp) on the first YAML file read.
#include "core/yaml_document.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/paths.hpp"
#include "util/small_file.hpp"

namespace gpuscope {
namespace {

// The private library's entry point: `text` into {"value": ..., "lines": {pointer: line}} as
// JSON text, or an error message with its line.
using YamlToJson = bool (*)(const std::string* text, std::string* json, std::string* error);

YamlToJson yaml_to_json() {
  static const auto entry = reinterpret_cast<YamlToJson>(
      private_library_symbol("libgpuscope_yaml.so", "gpuscope_yaml_to_json", "reading YAML",
                             "it needs yaml-cpp: apt install libyaml-cpp0.7"));
  return entry;
}

}  // namespace

int YamlDocument::line_of(const std::string& pointer) const {
  std::string at = pointer;
  for (;;) {
    if (const auto found = lines.find(at); found != lines.end()) return found->second;
    if (at.empty()) return 0;
    const auto slash = at.rfind('/');
    at = slash == std::string::npos ? std::string() : at.substr(0, slash);
  }
}

std::string YamlDocument::where(const std::string& pointer) const {
  const int line = line_of(pointer);
  return line > 0 ? fmt::format("{} line {}", name, line) : name;
}

YamlDocument parse_yaml(const std::string& text, const std::string& name) {
  std::string json;
  std::string error;
  if (!yaml_to_json()(&text, &json, &error)) {
    throw Error::usage(fmt::format("{}: {}", name, error), {},
                       "correct the YAML there (a tab indents nothing in YAML; quote values "
                       "holding ': ' or '#')");
  }
  nlohmann::json parsed = nlohmann::json::parse(json);
  YamlDocument document;
  document.name = name;
  document.value = std::move(parsed.at("value"));
  for (const auto& [pointer, line] : parsed.at("lines").items()) {
    document.lines[pointer] = line.get<int>();
  }
  return document;
}

YamlDocument read_yaml_file(const std::string& path) {
  constexpr std::size_t kMaxBytes = std::size_t{1} << 20;
  const auto text = util::read_small_file(path, kMaxBytes);
  if (!text) {
    throw Error::usage(fmt::format("cannot read {}", path), text.error().reason,
                       "give the path of a readable YAML file of at most 1 MiB");
  }
  return parse_yaml(*text, path);
}

}  // namespace gpuscope
