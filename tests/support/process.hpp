// Runs a program the way a user would, capturing its exit status and output. Used by the
// black-box tests to drive the real gpuscope binary.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpuscope::testing {

struct ProcessResult {
  int exit_code = -1;  // the exit status, or 128 + signal as a shell reports it
  std::string out;
  std::string err;
};

// Runs `argv` with the current environment plus `env` (a value of "\x01" unsets the variable),
// waits for it, and returns what it printed. Aborts the test run if the program cannot start.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {});

// Runs the gpuscope binary under test (GPUSCOPE_TEST_BINARY) with `args`.
ProcessResult run_gpuscope(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env = {});

// A fresh directory removed when the object goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace gpuscope::testing
