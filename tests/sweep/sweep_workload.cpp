// A cooperating test workload for power-limit sweeps on the simulated GPUs. It reads the
// simulated driver's state file (GPUSCOPE_SIM_STATE) to learn how fast the capped GPU computes
// (the "speed" the simulator stores with each limit), runs as long as a real job would on that
// GPU (nominal seconds / speed), prints its progress and its throughput like a training script,
// and exits. The simulated GPU itself draws less power under a lower cap.
//
//   sweep_workload [--seconds S] [--seconds-capped S] [--units N] [--steps K] [--exit CODE]
//                  [--pid-file PATH]
//
// --seconds-capped replaces --seconds when the GPU is capped (speed < 1): signal tests use it to
// make only the capped trials long.
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
  const double speed = simulated_speed();
  if (speed < 1 && seconds_capped >= 0) seconds = seconds_capped;
  const double wall = seconds / speed;
  const auto start = std::chrono::steady_clock::now();
  for (int step = 1; step <= steps; ++step) {
    std::this_thread::sleep_until(start + std::chrono::duration<double>(wall * step / steps));
    std::printf("step %d/%d: processed %g samples\n", step, steps, units / steps);
    std::fflush(stdout);
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("throughput: %.1f samples/s (speed %.4f)\n", units / elapsed, speed);
  return exit_code;
}
