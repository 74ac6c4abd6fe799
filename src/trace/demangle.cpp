#include "trace/demangle.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace gpuscope::trace {
namespace {

// Removes a balanced (...) or <...> group ending at the end of `text`, if there is one.
bool strip_trailing_group(std::string_view& text, char open, char close) {
  if (text.empty() || text.back() != close) return false;
  int depth = 0;
  for (std::size_t i = text.size(); i-- > 0;) {
    if (text[i] == close) ++depth;
    if (text[i] == open && --depth == 0) {
      text = text.substr(0, i);
      return true;
    }
  }
  return false;
}

}  // namespace

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

std::string short_kernel_name(std::string_view name) {
  std::string_view text = name;
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  strip_trailing_group(text, '(', ')');
  strip_trailing_group(text, '<', '>');
  // The last component: after the last space or "::" outside brackets.
  int depth = 0;
  for (std::size_t i = text.size(); i-- > 0;) {
    const char c = text[i];
    if (c == '>' || c == ')') ++depth;
    if (c == '<' || c == '(') --depth;
    if (depth == 0 && (c == ' ' || c == ':')) {
      text = text.substr(i + 1);
      break;
    }
  }
  return text.empty() ? std::string(name) : std::string(text);
}

}  // namespace gpuscope::trace
