// The mark protocol (docs/phases.md, "Marks"): how a job tells the profiling gpuscope that a
// phase begins or ends, from any language, without CUDA. One line per mark, sent over a
// connection to the Unix stream socket named by GPUSCOPE_MARK_SOCKET (connect once, then a line
// per mark), tab-separated UTF-8 text ending in a newline:
//
//   GSM1 <TAB> begin|end|point <TAB> MONO_NS <TAB> PID <TAB> TID <TAB> INSTANCE <TAB> NAME
//
// MONO_NS is the sender's CLOCK_MONOTONIC in ns (Python's time.monotonic_ns()), the clock of
// gpuscope's samples; TID may be empty, INSTANCE (which one: "17" of step 17) may be empty;
// NAME is the rest of the line, tabs included. At most kMaxMarkBytes bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::phases {

inline constexpr const char* kMarkSocketVariable = "GPUSCOPE_MARK_SOCKET";
inline constexpr std::string_view kMarkMagic = "GSM1";
inline constexpr std::size_t kMaxMarkBytes = 4096;
// Names and instances longer than this are cut (at a UTF-8 character boundary).
inline constexpr std::size_t kMaxNameBytes = 512;

enum class MarkKind { Begin, End, Point };

std::string_view to_text(MarkKind kind);
std::optional<MarkKind> mark_kind_from_text(std::string_view text);

struct Mark {
  MarkKind kind = MarkKind::Point;
  std::int64_t mono_ns = 0;
  std::int64_t pid = 0;
  std::optional<std::int64_t> tid;
  std::string instance;
  std::string name;
};

// The line for `mark`, without its newline (its name and instance cleaned as parse_mark would).
std::string format_mark(const Mark& mark);

// The mark a line holds, or nullopt with `why` set (a line on the socket that is not a mark:
// another program's, a cut one, a future version's). A trailing newline is not part of it.
std::optional<Mark> parse_mark(std::string_view line, std::string* why = nullptr);

// A name or instance as gpuscope keeps it: control characters (tabs, newlines, NUL, ...)
// become spaces, surrounding spaces go, and it is cut to kMaxNameBytes at a character boundary
// (a space the cut leaves at the end goes too, so cleaning it again changes nothing).
std::string clean_name(std::string_view text);

}  // namespace gpuscope::phases
