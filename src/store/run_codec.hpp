// How run metadata is spelled in the database: status words, JSON arrays, device capabilities
// (the command line for people is util/command_line.hpp). Shared by the writer, the reader and
// merge.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_description.hpp"
#include "core/run.hpp"

namespace gpuscope::store {

// 'running', 'finished', 'signaled', 'timed_out', 'not_started'.
std::string_view status_text(RunStatus status);
// The status a stored word stands for; nullopt for a word this gpuscope does not know.
std::optional<RunStatus> parse_status(std::string_view text);

// 'stdout' / 'stderr'.
std::string_view stream_text(OutputStream stream);

// ["a","b"] and back; a malformed or non-array text reads as an empty list.
std::string to_json_array(const std::vector<std::string>& items);
std::vector<std::string> from_json_array(const std::string& text);

// [{"key":..,"label":..,"supported":..,"detail":..}] and back.
std::string capabilities_json(const std::vector<Capability>& capabilities);
std::vector<Capability> parse_capabilities(const std::string& text);

}  // namespace gpuscope::store
