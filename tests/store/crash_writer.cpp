// Test helper: writes samples for 8 GPUs through RunWriter until it is killed, and reports on
// stdout after each committed flush "flushes rows_written pushed", so the crash test knows which
// rows must survive a kill -9. An optional third argument pushes that many ticks every 5 ms
// (default 1), enough to fill sample chunks before the kill.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "store/run_writer.hpp"
#include "store_test_data.hpp"

int main(int argc, char** argv) {
  using namespace gpuscope;
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s DB FLUSH_MS [TICKS_PER_5_MS]\n", argv[0]);
    return 2;
  }
  const int burst = argc == 4 ? std::atoi(argv[3]) : 1;
  store::WriterOptions options;
  options.flush_interval = std::chrono::milliseconds(std::atoi(argv[2]));
  auto writer = store::RunWriter::create(argv[1], true, store::testing::make_run(),
                                         store::testing::make_devices(8), options);
  std::int64_t seq = 0;
  std::int64_t reported = 0;
  // Bounded so a test that fails to kill us does not leave a process behind forever.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    for (int tick = 0; tick < burst; ++tick) {
      for (unsigned device = 0; device < 8; ++device) {
        writer->push(store::testing::make_sample(device, seq));
      }
      ++seq;
    }
    const auto stats = writer->stats();
    if (stats.flushes != reported) {
      reported = stats.flushes;
      const std::string line = std::to_string(stats.flushes) + " " +
                               std::to_string(stats.rows_written) + " " + std::to_string(seq * 8) +
                               "\n";
      if (write(STDOUT_FILENO, line.data(), line.size()) < 0) return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 3;
}
