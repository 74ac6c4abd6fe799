// Temporary directories for tests. Its own small library (gpuscope_test_tempdir), so suites that
// must not depend on the gpuscope binary (the simulator's) can use it too.
#pragma once

#include <string>

namespace gpuscope::testing {

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  // Throws std::runtime_error if the directory cannot be made.
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The whole content of a file ("" if it cannot be read).
std::string read_file(const std::string& path);

}  // namespace gpuscope::testing
