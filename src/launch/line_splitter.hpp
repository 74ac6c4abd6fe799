// Cuts a byte stream into lines as it arrives in arbitrary chunks: a line may span reads, and
// the last one may have no newline at all.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::launch {

// Longest line handed on in one piece; longer ones (a progress bar redrawn with '\r' for an
// hour) are split so memory stays bounded whatever the job prints.
inline constexpr std::size_t kMaxLineBytes = 64 * 1024;

class LineSplitter {
 public:
  // `max_line_bytes` must be at least 1.
  explicit LineSplitter(std::size_t max_line_bytes = kMaxLineBytes)
      : max_line_bytes_(max_line_bytes) {}

  // Appends `chunk` and returns the lines it completed, without their '\n' (a '\r' before it
  // is kept: the bytes are the job's). A longer line is cut every max_line_bytes.
  std::vector<std::string> feed(std::string_view chunk);

  // The unterminated rest, if any (call at end of stream); empties the splitter.
  std::vector<std::string> finish();

 private:
  std::size_t max_line_bytes_;
  std::string pending_;
};

}  // namespace gpuscope::launch
