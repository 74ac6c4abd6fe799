// A cooperating test workload for power-limit sweeps on the simulated GPUs. It reads the
// simulated driver's state file (GPUSCOPE_SIM_STATE) to learn how fast the capped GPU computes
// (the "speed" the simulator stores with each limit), runs as long as a real job would on that
// GPU (nominal seconds / speed), prints its progress and its throughput like a training script,
// and exits. The simulated GPU itself draws less power under a lower cap.
//
// It marks its work the way a job tells `gpuscope sweep --window-begin/--window-end` where its
// work is: "work begins at T s" once it has started up, and "work ends at T s" after it, T its
// CLOCK_MONOTONIC time (steady_clock) in seconds. The end is the moment the simulated work was
// done, begin + nominal / speed: its duration is the simulator's physics, never the test
// machine's start-up or scheduling delays (a wakeup that comes late is the CPU's delay, not the
// GPU's), so a sweep measures the same time and energy on a slow, loaded machine as on an idle
// one.
//
//   sweep_workload [--seconds S] [--seconds-capped S] [--units N] [--steps K] [--exit CODE]
//                  [--exit-capped CODE] [--startup S] [--pid-file PATH]
//
// --seconds-capped replaces --seconds when the GPU is capped (speed < 1): signal tests use it to
// make only the capped trials long; --exit-capped likewise replaces --exit. --startup sleeps
// before the work begins, as a job's imports and data loading do.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

namespace {

// The slowest GPU's speed (a data-parallel job runs at the pace of its slowest GPU); 1 when no
// limit was ever set.
double simulated_speed() {
  const char* path = std::getenv("GPUSCOPE_SIM_STATE");
  if (path == nullptr) return 1.0;
  std::ifstream in(path);
  if (!in) return 1.0;
  std::stringstream buffer;
  buffer << in.rdbuf();
  double speed = 1.0;
  try {
    const auto state = nlohmann::json::parse(buffer.str());
    for (const auto& [uuid, gpu] : state.at("gpus").items()) {
      speed = std::min(speed, gpu.value("speed", 1.0));
    }
  } catch (const std::exception&) {
    return 1.0;
  }
  return speed > 0 ? speed : 1.0;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0.5;
  double seconds_capped = -1;
  double units = 1000;
  int steps = 4;
  int exit_code = 0;
  int exit_capped = -1;
  double startup = 0;
  std::string pid_file;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    const std::string value = argv[i + 1];
    if (option == "--seconds") {
      seconds = std::stod(value);
    } else if (option == "--seconds-capped") {
      seconds_capped = std::stod(value);
    } else if (option == "--units") {
      units = std::stod(value);
    } else if (option == "--steps") {
      steps = std::stoi(value);
    } else if (option == "--exit") {
      exit_code = std::stoi(value);
    } else if (option == "--exit-capped") {
      exit_capped = std::stoi(value);
    } else if (option == "--startup") {
      startup = std::stod(value);
    } else if (option == "--pid-file") {
      pid_file = value;
    } else {
      std::fprintf(stderr, "sweep_workload: unknown option %s\n", option.c_str());
      return 2;
    }
  }
  if (!pid_file.empty()) {
    const std::string temporary = pid_file + ".tmp";
    std::ofstream(temporary) << getpid() << "\n";
    std::rename(temporary.c_str(), pid_file.c_str());
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(startup));
  const double speed = simulated_speed();
  if (speed < 1 && seconds_capped >= 0) seconds = seconds_capped;
  if (speed < 1 && exit_capped >= 0) exit_code = exit_capped;
  const double wall = seconds / speed;
  const auto start = std::chrono::steady_clock::now();
  const auto stamp = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
  };
  std::printf("work begins at %.9f s\n", stamp(start));
  std::fflush(stdout);
  for (int step = 1; step <= steps; ++step) {
    std::this_thread::sleep_until(start + std::chrono::duration<double>(wall * step / steps));
    std::printf("step %d/%d: processed %g samples\n", step, steps, units / steps);
    std::fflush(stdout);
  }
  const auto done = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(wall));
  std::printf("work ends at %.9f s\n", stamp(done));
  std::printf("throughput: %.1f samples/s (speed %.4f)\n", units / wall, speed);
  return exit_code;
}
