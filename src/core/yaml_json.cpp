// The private library libgpuscope_yaml.so (core/yaml_document.hpp): yaml-cpp's nodes into JSON
// with each value's line, typed by YAML 1.2's core schema. Built apart from gpuscope_core so
// that only the commands reading YAML map yaml-cpp.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

namespace {

constexpr int kMaxDepth = 64;

struct Failure {
  std::string message;
};

// A JSON pointer's escaping of one key (RFC 6901).
std::string pointer_token(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// A plain scalar by YAML 1.2's core schema (null, booleans, integers, floats), else a string.
nlohmann::json plain_scalar(const std::string& text) {
  static const std::regex kInteger("[-+]?[0-9]+");
  static const std::regex kOctal("0o[0-7]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return nullptr;
  }
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  // A number too large for its type stays text: the reader then says it is not a number.
  try {
    if (std::regex_match(text, kInteger)) {
      try {
        return std::stoll(text);
      } catch (const std::out_of_range&) {
        return std::stod(text);
      }
    }
    if (std::regex_match(text, kOctal)) return std::stoll(text.substr(2), nullptr, 8);
    if (std::regex_match(text, kHex)) return std::stoll(text.substr(2), nullptr, 16);
    if (std::regex_match(text, kFloat)) return std::stod(text);
  } catch (const std::out_of_range&) {
    return text;
  }
  return text;
}

struct Converter {
  nlohmann::json lines = nlohmann::json::object();

  nlohmann::json convert(const YAML::Node& node, const std::string& pointer, int depth) {
    if (depth > kMaxDepth) {
      throw Failure{
          fmt::format("line {}: nested deeper than {} levels", node.Mark().line + 1, kMaxDepth)};
    }
    if (node.Mark().line >= 0) lines[pointer] = node.Mark().line + 1;
    switch (node.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return nullptr;
      case YAML::NodeType::Scalar:
        // yaml-cpp tags a quoted scalar "!", a plain one "?".
        return node.Tag() == "!" ? nlohmann::json(node.Scalar()) : plain_scalar(node.Scalar());
      case YAML::NodeType::Sequence: {
        nlohmann::json out = nlohmann::json::array();
        std::size_t i = 0;
        for (const auto& item : node) {
          out.push_back(convert(item, fmt::format("{}/{}", pointer, i++), depth + 1));
        }
        return out;
      }
      case YAML::NodeType::Map:
        return convert_map(node, pointer, depth);
    }
    return nullptr;
  }

  nlohmann::json convert_map(const YAML::Node& node, const std::string& pointer, int depth) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& item : node) {
      const int line = item.first.Mark().line + 1;
      if (!item.first.IsScalar()) {
        throw Failure{fmt::format("line {}: a key must be a plain word", line)};
      }
      const std::string key = item.first.Scalar();
      if (out.contains(key)) {
        throw Failure{fmt::format("line {}: '{}' is given twice in one mapping", line, key)};
      }
      const std::string child = pointer + "/" + pointer_token(key);
      out[key] = convert(item.second, child, depth + 1);
      lines[child] = line;  // the key's line: where a reader looks for it
    }
    return out;
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) bool gpuscope_yaml_to_json(
    const std::string* text, std::string* json, std::string* error) {
  try {
    const YAML::Node root = YAML::Load(*text);
    Converter converter;
    nlohmann::json value = converter.convert(root, "", 0);
    *json =
        nlohmann::json{{"value", std::move(value)}, {"lines", std::move(converter.lines)}}.dump();
    return true;
  } catch (const YAML::Exception& e) {
    *error = e.mark.line >= 0 ? fmt::format("line {}: {}", e.mark.line + 1, e.msg) : e.msg;
  } catch (const Failure& e) {
    *error = e.message;
  } catch (const std::exception& e) {
    *error = e.what();
  }
  return false;
}
