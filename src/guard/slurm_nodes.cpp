#include "guard/slurm_nodes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "guard/notice_text.hpp"

namespace gpuscope::guard {
namespace {

std::string lower_state(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool out_of_service(std::string state) {
  while (!state.empty() && std::string_view("*~#!%$@^-").find(state.back()) != std::string::npos) {
    state.pop_back();
  }
  // A combined state ("idle+drain", "mixed+drain") is out when any part is.
  for (const char* word : {"drain", "down", "fail", "inval"}) {
    if (state.find(word) != std::string::npos) return true;
  }
  return false;
}

bool valid_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

std::vector<std::string> sinfo_arguments() {
  return {"--Node", "--noheader", "--format=%N|%R|%T"};
}

SinfoRead read_sinfo(std::string_view text) {
  SinfoRead read;
  std::map<std::string, SlurmNode> by_name;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) continue;
    const std::size_t a = line.find('|');
    const std::size_t b = a == std::string_view::npos ? a : line.find('|', a + 1);
    const std::string_view name = line.substr(0, a);
    const std::string_view partition = a == b ? "" : line.substr(a + 1, b - a - 1);
    const std::string_view state = b == std::string_view::npos ? "" : line.substr(b + 1);
    if (b == std::string_view::npos || !valid_name(name) || !valid_name(partition) ||
        state.empty() || state.find('|') != std::string_view::npos) {
      if (read.unreadable.size() < 5) read.unreadable.push_back(clean_value(std::string(line)));
      ++read.unreadable_count;
      continue;
    }
    SlurmNode& node = by_name[std::string(name)];
    node.name = name;
    node.partitions.emplace_back(partition);
    node.drained = node.drained || out_of_service(lower_state(state));
  }
  for (auto& [name, node] : by_name) read.nodes.push_back(std::move(node));
  return read;
}

}  // namespace gpuscope::guard
