// What a log left out or had absent, counted while it is read and said once per file at the
// end (a note per column, not per row: a 10 GB log must not give millions of notes). Shared by
// the dmon formats (docs/logs.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace gpuscope::ingest {

struct LogTally {
  std::map<std::string, std::map<std::string, std::int64_t>> absent;  // column -> why -> rows
  std::vector<std::size_t> repeated_headers;    // lines where the same header came again
  std::vector<std::size_t> new_headers;         // lines where other columns began
  std::map<std::string, std::string> left_out;  // column -> why (one note lists them)
  std::map<std::string, std::int64_t> skipped;  // why -> rows left out

  // The notes, for `file`. `repeats`: why a log repeats its header, said with the lines where it
  // did; empty: repeats are the format's own and not worth a note.
  void say(const std::filesystem::path& file, const std::string& repeats,
           std::vector<std::string>& notes) const;
};

// "3, 9, 12, 20, 31 and 12 more": line numbers for notes.
std::string line_list(const std::vector<std::size_t>& lines);

}  // namespace gpuscope::ingest
