#include "app/profile/mark.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "phases/mark_socket.hpp"

namespace gpuscope::app {

int run_mark(const MarkOptions& o) {
  const std::int64_t now = mono_now_ns();  // first: the moment the caller asked for
  const auto kind = phases::mark_kind_from_text(o.kind);
  if (!kind) {
    throw Error::usage(fmt::format("'{}' is not a kind of mark", o.kind), {},
                       "use begin, end or point: gpuscope mark begin NAME");
  }
  phases::Mark mark;
  mark.kind = *kind;
  mark.mono_ns = now;
  mark.name = phases::clean_name(o.name);
  mark.instance = phases::clean_name(o.instance);
  if (mark.name.empty()) {
    throw Error::usage("the mark has no name", {}, "give one: gpuscope mark begin checkpoint");
  }
  if (o.pid && *o.pid <= 0) throw Error::usage(fmt::format("--pid {} is not a process id", *o.pid));
  // The phase is the caller's (the shell or program that ran this), not this short-lived
  // process's: its begin and end then pair up within it.
  mark.pid = o.pid ? *o.pid : static_cast<std::int64_t>(getppid());
  const char* address = std::getenv(phases::kMarkSocketVariable);
  const phases::SendOutcome sent = phases::send_mark(address != nullptr ? address : "", mark);
  if (sent.result == phases::SendResult::Sent) return 0;
  if (!o.quiet && sent.result != phases::SendResult::NoProfiler) {
    fmt::print(stderr, "gpuscope mark: the mark '{}' was not delivered: {}\n", mark.name,
               sent.result == phases::SendResult::Busy
                   ? "the profiler's queue is full (" + sent.detail + ")"
                   : sent.detail);
  } else if (o.strict && !o.quiet) {
    fmt::print(stderr, "gpuscope mark: {} is not set: this is not running under gpuscope profile\n",
               phases::kMarkSocketVariable);
  }
  return o.strict ? 1 : 0;
}

}  // namespace gpuscope::app
