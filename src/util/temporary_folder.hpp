// A private folder for temporary files: made with mkdtemp (mode 0700, a name nobody can predict
// or make first, so a shared /tmp offers no symlink attack), removed with everything in it when
// the object goes, and also when SIGINT, SIGTERM, SIGHUP or SIGQUIT ends the process while it
// exists (the signal's default action then goes on: the process still ends by that signal).
#pragma once

#include <filesystem>
#include <string_view>

namespace gpuscope::util {

class TemporaryFolder {
 public:
  // Makes `<dir>/<prefix>XXXXXX`, `dir` being std::filesystem::temp_directory_path() ($TMPDIR,
  // else /tmp) when empty. Throws std::system_error naming the folder when it cannot.
  explicit TemporaryFolder(std::string_view prefix, const std::filesystem::path& dir = {});
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // From now on the folder stays, with what is in it, when the object goes or a signal ends the
  // process: what it holds has become the user's (e.g. samples a push could not deliver).
  void keep();

 private:
  void release_slot();

  std::filesystem::path path_;
  bool kept_ = false;
  int slot_ = -1;  // its place among the folders a signal removes (-1: too many, not covered)
};

}  // namespace gpuscope::util
