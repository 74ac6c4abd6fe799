#include "util/temporary_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace gpuscope::util {
namespace {

namespace fs = std::filesystem;

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr std::size_t kSlots = 16;
constexpr std::size_t kPathBytes = 4096;
constexpr int kMaxDepth = 8;  // the folders gpuscope makes inside nest two levels

// The folders a signal removes. A signal handler may only read plain memory and make system
// calls: each slot's path is written before its flag is set, and cleared after it is unset.
struct Slot {
  std::atomic<bool> used{false};
  char path[kPathBytes] = {};
};
std::array<Slot, kSlots> slots;

// The dispositions found before the handler went in, restored when the last folder goes.
std::mutex install_mutex;
int installed_folders = 0;
struct sigaction previous[std::size(kSignals)];
bool replaced[std::size(kSignals)] = {};

// Removes `name` under the open folder `parent`, a tree when it is a folder, with system calls
// only (unlinkat, openat, getdents64), so that a signal handler can call it.
void remove_at(int parent, const char* name, int depth) {
  if (unlinkat(parent, name, 0) == 0 || (errno != EISDIR && errno != EPERM)) return;
  if (depth > kMaxDepth) return;
  const int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buffer[2048];
  // Removing while reading may make getdents skip names: read again until a pass finds none.
  for (bool removed = true; removed;) {
    removed = false;
    lseek(fd, 0, SEEK_SET);
    long n;
    while ((n = syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0) {
      for (long at = 0; at < n;) {
        // glibc's dirent64 has the kernel's linux_dirent64 layout.
        const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + at);
        at += entry->d_reclen;
        if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) {
          continue;
        }
        remove_at(fd, entry->d_name, depth + 1);
        removed = true;
      }
    }
  }
  close(fd);
  unlinkat(parent, name, AT_REMOVEDIR);
}

extern "C" void remove_folders_and_end(int signal_number) {
  const int saved = errno;
  for (const Slot& slot : slots) {
    if (slot.used.load(std::memory_order_acquire)) remove_at(AT_FDCWD, slot.path, 0);
  }
  errno = saved;
  // SA_RESETHAND put the default action back and SA_NODEFER leaves the signal unblocked: this
  // ends the process by the signal, as it would have without the folders.
  raise(signal_number);
}

// Puts the handler in for the signals whose action is the default (one ignored, or handled by
// someone else, stays theirs).
void install_handler() {
  std::lock_guard lock(install_mutex);
  if (installed_folders++ > 0) return;
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
    replaced[i] = false;
    if (sigaction(kSignals[i], nullptr, &previous[i]) != 0) continue;
    if ((previous[i].sa_flags & SA_SIGINFO) != 0 || previous[i].sa_handler != SIG_DFL) continue;
    struct sigaction action {};
    action.sa_handler = remove_folders_and_end;
    sigemptyset(&action.sa_mask);
    action.sa_flags = static_cast<int>(SA_RESETHAND | SA_NODEFER);
    replaced[i] = sigaction(kSignals[i], &action, nullptr) == 0;
  }
}

// Puts the found dispositions back, each only where ours is still there: a handler someone
// installed after ours (a workflow's own SIGINT) stays theirs.
void remove_handler() {
  std::lock_guard lock(install_mutex);
  if (--installed_folders > 0) return;
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
    struct sigaction current {};
    if (replaced[i] && sigaction(kSignals[i], nullptr, &current) == 0 &&
        (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == remove_folders_and_end) {
      sigaction(kSignals[i], &previous[i], nullptr);
    }
    replaced[i] = false;
  }
}

// A free slot for `path` (-1 when there is none: the folder is then removed on exit only).
int take_slot(const fs::path& path) {
  const std::string text = fs::absolute(path).string();
  if (text.size() >= kPathBytes) return -1;
  std::lock_guard lock(install_mutex);  // slots are written by one thread at a time
  for (std::size_t i = 0; i < kSlots; ++i) {
    if (slots[i].used.load(std::memory_order_relaxed)) continue;
    std::memcpy(slots[i].path, text.c_str(), text.size() + 1);
    slots[i].used.store(true, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

TemporaryFolder::TemporaryFolder(std::string_view prefix, const fs::path& dir) {
  const fs::path base = dir.empty() ? fs::temp_directory_path() : dir;
  std::string pattern = (base / (std::string(prefix) + "XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (mkdtemp(name.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot make a temporary folder " + pattern);
  }
  path_ = name.data();
  install_handler();
  slot_ = take_slot(path_);
}

void TemporaryFolder::release_slot() {
  if (slot_ >= 0)
    slots[static_cast<std::size_t>(slot_)].used.store(false, std::memory_order_release);
  slot_ = -1;
}

void TemporaryFolder::keep() {
  release_slot();
  kept_ = true;
}

TemporaryFolder::~TemporaryFolder() {
  release_slot();
  remove_handler();
  if (kept_) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace gpuscope::util
