#include "launch/line_splitter.hpp"

#include <algorithm>
#include <utility>

namespace gpuscope::launch {

std::vector<std::string> LineSplitter::feed(std::string_view chunk) {
  std::vector<std::string> lines;
  while (!chunk.empty()) {
    if (pending_.size() == max_line_bytes_) {
      // A full line is held back until the next byte shows whether it simply ended there
      // (newline: one line, not a full one and an empty one) or has to be split.
      lines.push_back(std::exchange(pending_, {}));
      if (chunk.front() == '\n') chunk.remove_prefix(1);
      continue;
    }
    const std::size_t room = max_line_bytes_ - pending_.size();
    const std::size_t newline = chunk.find('\n');
    if (newline != std::string_view::npos && newline <= room) {
      pending_.append(chunk.substr(0, newline));
      lines.push_back(std::exchange(pending_, {}));
      chunk.remove_prefix(newline + 1);
      continue;
    }
    const std::size_t take = std::min(room, chunk.size());
    pending_.append(chunk.substr(0, take));
    chunk.remove_prefix(take);
  }
  return lines;
}

std::vector<std::string> LineSplitter::finish() {
  std::vector<std::string> lines;
  if (!pending_.empty()) lines.push_back(std::exchange(pending_, {}));
  return lines;
}

}  // namespace gpuscope::launch
