// What every text log reader holds while it reads one file (docs/logs.md): the file, the user's
// read options, the target, the lines, the zone of its local times and the tally said at its
// end, and the one shape of its errors: "log.csv:812: what is wrong", exit 2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ingest/format.hpp"
#include "ingest/logs/local_time.hpp"
#include "ingest/logs/log_tally.hpp"
#include "ingest/logs/log_text.hpp"
#include "ingest/run_target.hpp"

namespace gpuscope::ingest {

class LogReader {
 protected:
  LogReader(const std::filesystem::path& path, const ReadOptions& options, RunTarget& target);

  // Throws Error::usage naming the file and line (`line_` when set: a line held back and read
  // later, else the line read last) and what is wrong, with `hint` or a pointer to the docs.
  [[noreturn]] void bad(const std::string& what, const std::string& hint = {}) const;
  // The line being read: `line_` when set (a line held back), else the line read last.
  std::size_t line_now() const { return line_ != 0 ? line_ : lines_.number(); }
  // Says that the file gave no run.
  void say_no_samples();
  // `local`, a time of the log, in ns since the epoch through zone_ (LocalZone::to_utc_ns);
  // nullopt for a date that does not exist. A time the clocks skipped, or a repeated one the log
  // does not place, is bad() with the zone's reason and hint.
  std::optional<std::int64_t> utc_ns_of(const LocalDateTime& local, const LaterTimes& later = {});
  // The local times of the lines after the one being read, each as `time_of_line` reads it
  // (nullopt: a line without one, skipped), from a second reading of the file opened on the first
  // call: what places a log that begins in a repeated hour.
  LaterTimes later_times(
      std::function<std::optional<LocalDateTime>(std::string_view line)> time_of_line) const;

  std::filesystem::path path_;
  const ReadOptions& options_;
  RunTarget& target_;
  LogLines lines_;
  LocalZone zone_;
  LogTally tally_;
  std::size_t line_ = 0;
};

}  // namespace gpuscope::ingest
