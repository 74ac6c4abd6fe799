// The two ends of the mark protocol (phases/mark_protocol.hpp): sending never blocks and never
// fails the sender (a job must not stop or slow down because its profiler is gone), and the
// profiling gpuscope's receiver, a Unix stream socket in a private directory with one thread that
// hands each mark on as it arrives. A stream, not datagrams: a datagram socket queues only
// net.unix.max_dgram_qlen datagrams (10 by the kernel's default, in every container's network
// namespace), so a burst of marks would be refused; a connection buffers about 200 KB of lines.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "phases/mark_protocol.hpp"
#include "util/temporary_folder.hpp"

namespace gpuscope::phases {

enum class SendResult {
  Sent,
  NoProfiler,   // GPUSCOPE_MARK_SOCKET is not set (or empty): not under gpuscope profile
  Unreachable,  // nobody receives at that address (the profiler has ended, or another machine)
  Busy,         // the receiver's queue is full: the mark is dropped rather than wait
  Failed,       // anything else (errno in the text)
};

struct SendOutcome {
  SendResult result = SendResult::Sent;
  std::string detail;  // the address and the system's words, when not sent
};

// Sends `mark` as one line to the socket at `address` without blocking. One connection per
// process is kept open for all its marks (thread-safe).
SendOutcome send_mark(const std::string& address, const Mark& mark);

class MarkReceiver {
 public:
  // Called on the receiver's thread for each mark, with its arrival on CLOCK_MONOTONIC.
  using Handler = std::function<void(const Mark& mark, std::int64_t arrival_mono_ns)>;

  // Creates a private directory (mode 0700) under `parent` holding the socket "marks", and binds
  // it. Throws Error when it cannot (the parent is not writable, the path is too long for a
  // socket address).
  MarkReceiver(const std::filesystem::path& parent, Handler handler);
  // Stops (if needed) and removes the socket and its directory.
  ~MarkReceiver();
  MarkReceiver(const MarkReceiver&) = delete;
  MarkReceiver& operator=(const MarkReceiver&) = delete;

  // The address to give the job in GPUSCOPE_MARK_SOCKET.
  const std::string& address() const { return address_; }

  void start();
  // Hands on every mark already sent, then stops the thread and removes the socket; marks sent
  // after it are refused (the sender sees Unreachable).
  void stop();

  // Lines that were not marks, and the reason of the last one.
  std::uint64_t malformed() const { return malformed_.load(); }
  std::string last_malformed_reason() const;

 private:
  struct Client {
    int fd = -1;
    std::string pending;  // a line not yet ended
    bool overlong = false;
  };
  void loop();
  void drain();
  void accept_all();
  // Reads what a connection holds; false when it has closed.
  bool read_client(Client& client);
  void line(std::string_view text);

  std::optional<util::TemporaryFolder> dir_;  // private (0700), removed with its socket
  std::string address_;
  Handler handler_;
  int fd_ = -1;
  int wake_[2] = {-1, -1};
  std::vector<Client> clients_;  // the receiver's thread only
  std::thread thread_;
  std::atomic<std::uint64_t> malformed_{0};
  mutable std::mutex reason_mutex_;
  std::string reason_;
};

}  // namespace gpuscope::phases
