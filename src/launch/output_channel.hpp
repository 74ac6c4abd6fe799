// One captured output stream of the job: the read end of its pipe, the descriptor its bytes are
// passed through to (gpuscope's own stdout or stderr), and the lines cut from it.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/run.hpp"
#include "launch/line_splitter.hpp"
#include "launch/unique_fd.hpp"

namespace gpuscope::launch {

// Writes all of `bytes` to `fd`, riding out EINTR, partial writes and a non-blocking `fd`.
// Returns 0, or the errno that stopped it (EPIPE when the reader went away).
int write_all(int fd, std::string_view bytes);

class OutputChannel {
 public:
  using LineSink = std::function<void(OutputLine)>;

  // `read_end` must be non-blocking; `passthrough_fd` is not owned (-1: no passthrough).
  OutputChannel(OutputStream stream, UniqueFd read_end, int passthrough_fd);

  // The pipe's read end to poll, or -1 once the stream ended.
  int fd() const { return read_end_.get(); }
  bool is_open() const { return read_end_.valid(); }

  // Reads what the pipe holds now, passes it through unchanged, and gives `sink` each line it
  // completed. At end of stream it delivers the unterminated rest and closes the pipe. Failures
  // are appended to `problems`, once each.
  void pump(const LineSink& sink, std::vector<std::string>& problems);

  // Stops reading (the job is gone but something still holds the pipe open) and delivers the
  // unterminated rest.
  void close(const LineSink& sink);

 private:
  void deliver(std::vector<std::string> texts, const LineSink& sink) const;
  void pass_through(std::string_view bytes, std::vector<std::string>& problems);

  OutputStream stream_;
  UniqueFd read_end_;
  int passthrough_fd_;
  LineSplitter splitter_;
};

}  // namespace gpuscope::launch
