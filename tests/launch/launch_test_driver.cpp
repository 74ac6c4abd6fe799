// Runs one job through launch::Job the way `gpuscope profile` does (signal mask first), and
// exits with the job's status. The launcher's tests run it as a separate process to signal it
// and to give it a terminal.
//
//   launch_test_driver [--capture] [--max-runtime-ms N] [--grace-ms N] [--no-job-control]
//                      [--pid-file F] [--events F] [--lines F] [--report-terminal] -- CMD...
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "launch/job.hpp"
#include "launch/signals.hpp"

namespace {

using gpuscope::Event;
using gpuscope::OutputLine;
using gpuscope::OutputStream;
namespace launch = gpuscope::launch;

struct DriverOptions {
  launch::LaunchOptions launch;
  std::string pid_file;
  std::string events_file;
  std::string lines_file;
  bool report_terminal = false;
};

DriverOptions parse(int argc, char** argv) {
  DriverOptions options;
  int i = 1;
  const auto value = [&] {
    if (i + 1 >= argc) {
      std::fprintf(stderr, "launch_test_driver: %s needs a value\n", argv[i]);
      std::exit(2);
    }
    return std::string(argv[++i]);
  };
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--capture") {
      options.launch.capture_output = true;
    } else if (arg == "--max-runtime-ms") {
      options.launch.max_runtime = std::chrono::milliseconds(std::stoll(value()));
    } else if (arg == "--grace-ms") {
      options.launch.kill_grace = std::chrono::milliseconds(std::stoll(value()));
    } else if (arg == "--no-job-control") {
      options.launch.job_control = false;
    } else if (arg == "--pid-file") {
      options.pid_file = value();
    } else if (arg == "--events") {
      options.events_file = value();
    } else if (arg == "--lines") {
      options.lines_file = value();
    } else if (arg == "--report-terminal") {
      options.report_terminal = true;
    } else {
      std::fprintf(stderr, "launch_test_driver: unknown option %s\n", arg.c_str());
      std::exit(2);
    }
  }
  for (; i < argc; ++i) options.launch.argv.emplace_back(argv[i]);
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  // First, before anything could start a thread: the contract the CLI follows too.
  const launch::SignalGuard signal_guard;
  const DriverOptions options = parse(argc, argv);
  if (!options.pid_file.empty()) std::ofstream(options.pid_file) << getpid() << "\n";

  std::vector<Event> events;
  std::vector<OutputLine> lines;
  launch::JobCallbacks callbacks;
  callbacks.on_event = [&](const Event& event) { events.push_back(event); };
  callbacks.on_output = [&](const OutputLine& line) { lines.push_back(line); };
  const launch::JobResult result = launch::run_job(options.launch, callbacks);

  if (result.status == gpuscope::RunStatus::NotStarted) {
    std::fprintf(stderr, "not started: %s\n", launch::describe_exit(result).c_str());
  }
  if (!options.events_file.empty()) {
    std::ofstream out(options.events_file);
    for (const Event& event : events) out << event.kind << ": " << event.detail << "\n";
  }
  if (!options.lines_file.empty()) {
    std::ofstream out(options.lines_file);
    for (const OutputLine& line : lines) {
      out << (line.stream == OutputStream::Stdout ? "out|" : "err|") << line.text << "\n";
    }
  }
  if (options.report_terminal) {
    std::printf("driver:%s\n", tcgetpgrp(STDIN_FILENO) == getpgrp() ? "foreground" : "background");
  }
  return result.exit_code;
}
