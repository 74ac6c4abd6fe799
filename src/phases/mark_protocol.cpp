#include "phases/mark_protocol.hpp"

#include <charconv>
#include <vector>

namespace gpuscope::phases {
namespace {

std::optional<std::int64_t> integer(std::string_view text) {
  std::int64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || at != end || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::string_view to_text(MarkKind kind) {
  switch (kind) {
    case MarkKind::Begin:
      return "begin";
    case MarkKind::End:
      return "end";
    case MarkKind::Point:
      return "point";
  }
  return "point";
}

std::optional<MarkKind> mark_kind_from_text(std::string_view text) {
  if (text == "begin") return MarkKind::Begin;
  if (text == "end") return MarkKind::End;
  if (text == "point") return MarkKind::Point;
  return std::nullopt;
}

std::string clean_name(std::string_view text) {
  std::string out;
  out.reserve(std::min(text.size(), kMaxNameBytes));
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(byte < 0x20 || byte == 0x7f ? ' ' : c);
  }
  const auto first = out.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  out.erase(0, first);
  out.erase(out.find_last_not_of(' ') + 1);
  if (out.size() > kMaxNameBytes) {
    std::size_t cut = kMaxNameBytes;
    // Back to the start of a UTF-8 character (not a continuation byte 10xxxxxx).
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    out.erase(out.find_last_not_of(' ') + 1);  // a space before the cut ends no name
  }
  return out;
}

std::string format_mark(const Mark& mark) {
  std::string out(kMarkMagic);
  out += '\t';
  out += to_text(mark.kind);
  out += '\t';
  out += std::to_string(mark.mono_ns);
  out += '\t';
  out += std::to_string(mark.pid);
  out += '\t';
  if (mark.tid) out += std::to_string(*mark.tid);
  out += '\t';
  out += clean_name(mark.instance);
  out += '\t';
  out += clean_name(mark.name);
  return out;
}

std::optional<Mark> parse_mark(std::string_view line, std::string* why) {
  const auto fail = [why](const char* reason) -> std::optional<Mark> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  if (line.size() > kMaxMarkBytes) return fail("longer than 4096 bytes");
  // A trailing newline is what `echo` and print() add: not part of the name.
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  std::vector<std::string_view> fields;
  std::size_t at = 0;
  while (fields.size() < 6) {
    const auto tab = line.find('\t', at);
    if (tab == std::string_view::npos) break;
    fields.push_back(line.substr(at, tab - at));
    at = tab + 1;
  }
  if (fields.empty() || fields[0] != kMarkMagic) return fail("not a gpuscope mark (no GSM1)");
  if (fields.size() < 6) return fail("fewer than 7 fields");
  const std::string_view name = line.substr(at);
  Mark mark;
  const auto kind = mark_kind_from_text(fields[1]);
  if (!kind) return fail("the kind is not begin, end or point");
  mark.kind = *kind;
  const auto mono = integer(fields[2]);
  if (!mono || *mono < 0) return fail("the time is not a number of nanoseconds");
  mark.mono_ns = *mono;
  const auto pid = integer(fields[3]);
  if (!pid || *pid <= 0) return fail("the pid is not a process id");
  mark.pid = *pid;
  if (!fields[4].empty()) {
    const auto tid = integer(fields[4]);
    if (!tid || *tid <= 0) return fail("the thread id is not a number");
    mark.tid = *tid;
  }
  mark.instance = clean_name(fields[5]);
  mark.name = clean_name(name);
  if (mark.name.empty()) return fail("the name is empty");
  return mark;
}

}  // namespace gpuscope::phases
