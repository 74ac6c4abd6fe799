#include "ingest/logs/log_reader.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::ingest {

LogReader::LogReader(const std::filesystem::path& path, const ReadOptions& options,
                     RunTarget& target)
    : path_(path), options_(options), target_(target), lines_(path), zone_(options.timezone) {}

void LogReader::bad(const std::string& what, const std::string& hint) const {
  throw Error::usage(
      // The log's bytes quoted in `what` shown visibly: a NUL in a value cut the message there.
      fmt::format("{}:{}: {}", path_.string(), line_ != 0 ? line_ : lines_.number(),
                  util::visible(what)),
      {}, hint.empty() ? "check the log; docs/logs.md lists what gpuscope reads" : hint);
}

void LogReader::say_no_samples() {
  target_.notes().push_back(
      fmt::format("{} holds no samples; nothing read from it", path_.string()));
}

std::optional<std::int64_t> LogReader::utc_ns_of(const LocalDateTime& local,
                                                 const LaterTimes& later) {
  try {
    return zone_.to_utc_ns(local, later);
  } catch (const Error& e) {
    bad(e.reason().empty() ? e.summary() : fmt::format("{} ({})", e.summary(), e.reason()),
        e.hint());
  }
}

LaterTimes LogReader::later_times(
    std::function<std::optional<LocalDateTime>(std::string_view line)> time_of_line) const {
  auto reading = std::make_shared<std::unique_ptr<LogLines>>();
  return [this, reading,
          time_of_line = std::move(time_of_line)](bool restart) -> std::optional<LocalDateTime> {
    std::string_view line;
    if (restart || !*reading) {  // from the line after the one being read
      const std::size_t now = line_ != 0 ? line_ : lines_.number();
      *reading = std::make_unique<LogLines>(path_);
      while ((*reading)->number() < now && (*reading)->next(line)) {
      }
    }
    while ((*reading)->next(line)) {
      if (auto t = time_of_line(trim(line))) return t;
    }
    return std::nullopt;
  };
}

}  // namespace gpuscope::ingest
