#include "ingest/log_reader.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace gpuscope::ingest {

LogReader::LogReader(const std::filesystem::path& path, const ReadOptions& options,
                     RunTarget& target)
    : path_(path), options_(options), target_(target), lines_(path), zone_(options.timezone) {}

void LogReader::bad(const std::string& what, const std::string& hint) const {
  throw Error::usage(
      fmt::format("{}:{}: {}", path_.string(), line_ != 0 ? line_ : lines_.number(), what), {},
      hint.empty() ? "check the log; docs/logs.md lists what gpuscope reads" : hint);
}

void LogReader::say_no_samples() {
  target_.notes().push_back(
      fmt::format("{} holds no samples; nothing read from it", path_.string()));
}

}  // namespace gpuscope::ingest
