// A YAML file as JSON, with the line of every value: what gpuscope's YAML configuration files
// (guard's rules) are read through, so their checks work on nlohmann::json and still name the
// line of what is wrong. yaml-cpp lives in a private library (lib/gpuscope/libgpuscope_yaml.so)
// loaded on the first file read, so the commands that never read YAML never map it.
//
// Scalars are typed by YAML 1.2's core schema: a plain `true`, `12`, `0.5`, `~` are a boolean,
// numbers and null; a quoted scalar is always a string. YAML 1.1's `yes`, `no`, `on` and `off`
// stay strings (a reader expecting a boolean says so). A key given twice in one mapping, a key
// that is not a scalar, and nesting deeper than 64 levels are errors.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace gpuscope {

struct YamlDocument {
  std::string name;  // the file it came from, for messages
  nlohmann::json value;
  std::map<std::string, int> lines;  // JSON pointer ("/idle/cancel") → its 1-based line

  // The line of `pointer`, else of its nearest parent that has one (0: none).
  int line_of(const std::string& pointer) const;
  // "guard.yaml line 12" (or "guard.yaml" when no line is known), for messages.
  std::string where(const std::string& pointer) const;
};

// Parses `text` (the contents of `name`). Throws Error::usage naming the line of a syntax error,
// a duplicate key, a non-scalar key or nesting too deep; Error when the YAML library is missing.
YamlDocument parse_yaml(const std::string& text, const std::string& name);

// Reads and parses the file `path` (at most 1 MiB).
YamlDocument read_yaml_file(const std::string& path);

}  // namespace gpuscope
