// Runs a program the way a user would, capturing its exit status and output. Used by the
// black-box tests to drive the real gpuscope binary.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"  // TempDir and read_file, which most users of the runner need

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

// The environment of a simulated node whose simulator keeps its state in `state_file`, with the
// variables that choose GPUs (CUDA's, ROCm's, SLURM's) unset, so that the scenario's GPUs are
// all the job's whatever the test runner's own environment holds.
std::map<std::string, std::string> simulated_node_env(const std::string& state_file);

// Runs the gpuscope binary under test (GPUSCOPE_TEST_BINARY) with `args`.
ProcessResult run_gpuscope(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env = {});

// A program started in the background, for tests that signal or kill it while it runs. Its
// output goes to files; the destructor kills it (SIGKILL) if it is still running.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env, const std::string& out_file,
                    const std::string& err_file);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  int pid() const { return pid_; }
  void signal(int signal_number) const;
  // Waits for the exit and returns the status as a shell reports it.
  int wait();
  // Waits until `path` exists (a marker the program writes), up to `timeout_ms`.
  static bool wait_for_file(const std::string& path, int timeout_ms);

 private:
  int pid_ = -1;
  bool reaped_ = false;
};

// gpuscope started in the background with `args`.
std::unique_ptr<BackgroundProcess> start_gpuscope(const std::vector<std::string>& args,
                                                  const std::map<std::string, std::string>& env,
                                                  const std::string& out_file,
                                                  const std::string& err_file);

}  // namespace gpuscope::testing
