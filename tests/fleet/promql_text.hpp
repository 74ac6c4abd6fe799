// PromQL text as a server's lexer sees it, for the tests: every string literal taken out and
// decoded, the rest (the expression's shape) left with "#<n>" in each literal's place. A value
// that could close its string would show in the shape; the fake server reads the shape.
#pragma once

#include <cctype>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuscope::fleet::testing {

struct PromqlText {
  std::string shape;                 // the expression, each literal as "#<n>"
  std::vector<std::string> strings;  // the literals, decoded
};

// Throws std::invalid_argument on an unterminated literal or an escape PromQL does not have.
inline PromqlText lex_promql(const std::string& expr) {
  PromqlText out;
  std::size_t i = 0;
  while (i < expr.size()) {
    if (expr[i] != '"') {
      out.shape += expr[i++];
      continue;
    }
    std::string value;
    ++i;
    while (true) {
      if (i >= expr.size()) throw std::invalid_argument("unterminated string in " + expr);
      const char c = expr[i++];
      if (c == '"') break;
      if (c == '\n') throw std::invalid_argument("a raw newline in a string of " + expr);
      if (c != '\\') {
        value += c;
        continue;
      }
      if (i >= expr.size()) throw std::invalid_argument("a lone backslash in " + expr);
      const char e = expr[i++];
      if (e == 'n') {
        value += '\n';
      } else if (e == 'r') {
        value += '\r';
      } else if (e == 't') {
        value += '\t';
      } else if (e == '\\' || e == '"') {
        value += e;
      } else if (e == 'x' && i + 2 <= expr.size() && std::isxdigit(expr[i]) &&
                 std::isxdigit(expr[i + 1])) {
        value += static_cast<char>(std::stoi(expr.substr(i, 2), nullptr, 16));
        i += 2;
      } else {
        throw std::invalid_argument(std::string("unknown escape \\") + e + " in " + expr);
      }
    }
    out.shape += "\"#" + std::to_string(out.strings.size()) + "\"";
    out.strings.push_back(std::move(value));
  }
  return out;
}

// How often `word` occurs in `text`.
inline std::size_t occurrences(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

}  // namespace gpuscope::fleet::testing
