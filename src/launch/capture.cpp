#include "launch/capture.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "launch/unique_fd.hpp"

extern char** environ;

namespace gpuscope::launch {

namespace {

struct Pipe {
  UniqueFd read, write;
};

Pipe make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw Error("cannot create a pipe", std::strerror(errno));
  }
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

pid_t start(const std::string& program, const std::vector<std::string>& arguments, int input_fd,
            const Pipe& out, const Pipe& err, const std::string& install_hint) {
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (input_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, input_fd, 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err.write.get(), 2);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw Error(fmt::format("cannot run {}", program), std::strerror(rc), install_hint);
  }
  return pid;
}

// Reads both pipes until they close or the limit passes; returns false on timeout.
bool drain(UniqueFd& out_fd, UniqueFd& err_fd, Captured& c, std::chrono::milliseconds limit,
           std::size_t max_output) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  char buffer[65536];
  while (out_fd.valid() || err_fd.valid()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fds[2] = {{out_fd.get(), POLLIN, 0}, {err_fd.get(), POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) return false;
    UniqueFd* owners[2] = {&out_fd, &err_fd};
    std::string* sinks[2] = {&c.out, &c.err};
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        owners[i]->reset();
      } else if (sinks[i]->size() < max_output) {
        sinks[i]->append(buffer, std::min<std::size_t>(static_cast<std::size_t>(n),
                                                       max_output - sinks[i]->size()));
      }
    }
  }
  return true;
}

// `input` in a memory file, at its start, for the program's stdin.
UniqueFd input_file(const std::string& input) {
  UniqueFd fd(memfd_create("gpuscope-input", MFD_CLOEXEC));
  if (!fd.valid()) throw Error("cannot create a memory file", std::strerror(errno));
  for (std::size_t done = 0; done < input.size();) {
    const ssize_t n = ::write(fd.get(), input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("cannot write a memory file", std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  ::lseek(fd.get(), 0, SEEK_SET);
  return fd;
}

Captured run(const std::string& program, const std::vector<std::string>& arguments, int input_fd,
             std::chrono::milliseconds limit, const std::string& install_hint,
             std::size_t max_output) {
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  const pid_t pid = start(program, arguments, input_fd, out, err, install_hint);
  out.write.reset();
  err.write.reset();
  Captured c;
  if (!drain(out.read, err.read, c, limit, max_output)) {
    c.timed_out = true;
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return c;
}

}  // namespace

Captured capture(const std::string& program, const std::vector<std::string>& arguments,
                 std::chrono::milliseconds limit, const std::string& install_hint,
                 std::size_t max_output) {
  return run(program, arguments, -1, limit, install_hint, max_output);
}

Captured capture_with_input(const std::string& program, const std::vector<std::string>& arguments,
                            const std::string& input, std::chrono::milliseconds limit,
                            const std::string& install_hint) {
  const UniqueFd fd = input_file(input);
  return run(program, arguments, fd.get(), limit, install_hint, 1 << 20);
}

}  // namespace gpuscope::launch
