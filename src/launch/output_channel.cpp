#include "launch/output_channel.hpp"

#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "core/clock.hpp"

namespace gpuscope::launch {
namespace {

// One read's worth; several reads per wake-up keep a chatty job from filling its pipe while
// the bound keeps one stream from starving the other and the signal checks.
constexpr std::size_t kReadBytes = 64 * 1024;
constexpr int kReadsPerPump = 4;

const char* stream_name(OutputStream stream) {
  return stream == OutputStream::Stdout ? "stdout" : "stderr";
}

}  // namespace

int write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(written));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // Someone else made the shared descriptor non-blocking; wait until it drains.
      pollfd writable{fd, POLLOUT, 0};
      if (::poll(&writable, 1, -1) < 0 && errno != EINTR) return errno;
      continue;
    }
    return errno;
  }
  return 0;
}

OutputChannel::OutputChannel(OutputStream stream, UniqueFd read_end, int passthrough_fd)
    : stream_(stream), read_end_(std::move(read_end)), passthrough_fd_(passthrough_fd) {}

void OutputChannel::pump(const LineSink& sink, std::vector<std::string>& problems) {
  std::array<char, kReadBytes> buffer;
  for (int reads = 0; reads < kReadsPerPump && read_end_.valid(); ++reads) {
    const ssize_t count = ::read(read_end_.get(), buffer.data(), buffer.size());
    if (count > 0) {
      const std::string_view chunk(buffer.data(), static_cast<std::size_t>(count));
      pass_through(chunk, problems);
      deliver(splitter_.feed(chunk), sink);
      continue;
    }
    if (count < 0 && errno == EINTR) continue;
    if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (count < 0) {
      problems.push_back(std::string("reading the job's ") + stream_name(stream_) + " failed (" +
                         std::strerror(errno) + "); the rest of it is lost");
    }
    close(sink);  // end of stream
  }
}

void OutputChannel::close(const LineSink& sink) {
  if (!read_end_.valid()) return;
  read_end_.reset();
  deliver(splitter_.finish(), sink);
}

void OutputChannel::deliver(std::vector<std::string> texts, const LineSink& sink) const {
  if (texts.empty() || !sink) return;
  // Lines completed by one read share its timestamp: when gpuscope saw them, which is as close
  // to when the job wrote them as a pipe allows.
  const std::int64_t wall_ns = wall_now_ns();
  const std::int64_t mono_ns = mono_now_ns();
  for (std::string& text : texts) sink(OutputLine{wall_ns, mono_ns, stream_, std::move(text)});
}

void OutputChannel::pass_through(std::string_view bytes, std::vector<std::string>& problems) {
  if (passthrough_fd_ < 0) return;
  const int error_number = write_all(passthrough_fd_, bytes);
  if (error_number == 0) return;
  // The job must not notice that our own stdout went away: keep draining and recording.
  problems.push_back(std::string("cannot pass the job's ") + stream_name(stream_) +
                     " through to gpuscope's (" + std::strerror(error_number) +
                     "); it is still recorded");
  passthrough_fd_ = -1;
}

}  // namespace gpuscope::launch
