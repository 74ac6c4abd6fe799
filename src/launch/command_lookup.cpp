#include "launch/command_lookup.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuscope::launch {
namespace {

// What execve would say about `path`, as far as can be told without calling it: 0 when it looks
// runnable, else the errno execve would most likely give.
int probe_executable(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return errno;
  if (S_ISDIR(info.st_mode)) return EACCES;  // execve on a directory fails with EACCES
  if (access(path.c_str(), X_OK) != 0) return errno;
  if (!S_ISREG(info.st_mode)) return EACCES;
  return 0;
}

SpawnFailure failure(SpawnFailure::Reason reason, const std::string& command,
                     const std::string& path, int error_number) {
  return SpawnFailure{reason, command, path, error_number, std::strerror(error_number)};
}

}  // namespace

int SpawnFailure::exit_code() const {
  switch (reason) {
    case Reason::NotFound:
      return 127;
    case Reason::NotExecutable:
      return 126;
    case Reason::SystemError:
      break;
  }
  return 1;
}

std::string SpawnFailure::message() const {
  switch (reason) {
    case Reason::NotFound:
      if (command.find('/') != std::string::npos) {
        return "command not found: " + command + " (" + error_text + ")";
      }
      return "command not found: " + command;
    case Reason::NotExecutable:
      return "cannot execute " + (path.empty() ? command : path) + " (" + error_text + ")";
    case Reason::SystemError:
      break;
  }
  return "cannot start " + command + " (" + error_text + ")";
}

tl::expected<std::string, SpawnFailure> resolve_command(const std::string& command,
                                                        const std::string& search_path) {
  using Reason = SpawnFailure::Reason;
  if (command.empty()) return tl::unexpected(failure(Reason::NotFound, command, {}, ENOENT));

  if (command.find('/') != std::string::npos) {
    const int error_number = probe_executable(command);
    if (error_number == 0) return command;
    const bool missing = error_number == ENOENT || error_number == ENOTDIR;
    return tl::unexpected(failure(missing ? Reason::NotFound : Reason::NotExecutable, command,
                                  missing ? std::string() : command, error_number));
  }

  // Like execvp: a match we may not run is remembered, and reported only if nothing better
  // turns up later on the path.
  std::string refused_path;
  int refused_errno = 0;
  std::size_t begin = 0;
  while (begin <= search_path.size()) {
    std::size_t end = search_path.find(':', begin);
    if (end == std::string::npos) end = search_path.size();
    const std::string directory = search_path.substr(begin, end - begin);
    const std::string candidate =
        (directory.empty() ? std::string(".") : directory) + "/" + command;
    const int error_number = probe_executable(candidate);
    if (error_number == 0) return candidate;
    if (error_number != ENOENT && error_number != ENOTDIR && refused_path.empty()) {
      refused_path = candidate;
      refused_errno = error_number;
    }
    begin = end + 1;
  }
  if (!refused_path.empty()) {
    return tl::unexpected(failure(Reason::NotExecutable, command, refused_path, refused_errno));
  }
  return tl::unexpected(failure(Reason::NotFound, command, {}, ENOENT));
}

}  // namespace gpuscope::launch
