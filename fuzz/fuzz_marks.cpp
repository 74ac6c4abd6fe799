// libFuzzer target: the mark protocol (phases/mark_protocol), the lines any process that can
// reach GPUSCOPE_MARK_SOCKET writes to the profiler. parse_mark never throws; a line that is not
// a mark says why; a mark is one gpuscope can keep as it is: a name (and an instance) of at most
// kMaxNameBytes without control characters or surrounding spaces, a pid (and a thread id) above
// zero, a time not below zero; and the line format_mark writes for it reads back as the same
// mark, so what `gpuscope mark` sends is what the profiler records.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_file.hpp"
#include "phases/mark_protocol.hpp"

using gpuscope::fuzz::require;

namespace {

using namespace gpuscope::phases;

void require_clean(const std::string& text) {
  require(text.size() <= kMaxNameBytes);
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    require(byte >= 0x20 && byte != 0x7f);
  }
  require(text.empty() || (text.front() != ' ' && text.back() != ' '));
  require(clean_name(text) == text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  std::string why;
  const auto mark = parse_mark(line, &why);
  if (!mark) {
    require(!why.empty());
    return 0;
  }
  require(!mark->name.empty());
  require_clean(mark->name);
  require_clean(mark->instance);
  require(mark->pid > 0);
  require(!mark->tid || *mark->tid > 0);
  require(mark->mono_ns >= 0);
  const std::string again = format_mark(*mark);
  require(again.size() <= kMaxMarkBytes);
  const auto same = parse_mark(again);
  require(same.has_value());
  require(same->kind == mark->kind && same->mono_ns == mark->mono_ns && same->pid == mark->pid &&
          same->tid == mark->tid && same->instance == mark->instance && same->name == mark->name);
  return 0;
}
