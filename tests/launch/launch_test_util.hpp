// Helpers shared by the launcher's tests: files, waiting for a file to appear, and redirecting
// one of the test process's own descriptors to see what the launcher passed through.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/run.hpp"
#include "launch/signals.hpp"

namespace gpuscope::launch::test {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_file(const std::string& path, const std::string& content, mode_t mode) {
  std::ofstream(path, std::ios::binary) << content;
  ::chmod(path.c_str(), mode);
}

// Waits for `path` to exist. The limit only keeps a broken test from hanging; verdicts never
// depend on how long it took.
inline bool wait_for_file(const std::string& path,
                          std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (::access(path.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Points `fd` at `path` (created or truncated) until destroyed.
class RedirectedFd {
 public:
  RedirectedFd(int fd, const std::string& path) : fd_(fd) {
    std::fflush(nullptr);
    saved_ = ::dup(fd);
    const int target = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(target, fd);
    ::close(target);
  }
  ~RedirectedFd() {
    std::fflush(nullptr);
    ::dup2(saved_, fd_);
    ::close(saved_);
  }
  RedirectedFd(const RedirectedFd&) = delete;
  RedirectedFd& operator=(const RedirectedFd&) = delete;

 private:
  int fd_;
  int saved_;
};

// Jobs in the test process: the mask comes first, as in the CLI (gtest starts no threads).
class JobTest : public ::testing::Test {
 protected:
  SignalGuard signal_guard_;
};

inline bool has_event(const std::vector<Event>& events, const std::string& kind,
                      const std::string& detail_part) {
  return std::any_of(events.begin(), events.end(), [&](const Event& event) {
    return event.kind.text() == kind && event.detail.find(detail_part) != std::string::npos;
  });
}

inline bool has_problem(const std::vector<std::string>& problems, const std::string& part) {
  return std::any_of(problems.begin(), problems.end(), [&](const std::string& problem) {
    return problem.find(part) != std::string::npos;
  });
}

}  // namespace gpuscope::launch::test
