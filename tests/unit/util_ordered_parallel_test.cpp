// util/ordered_parallel.hpp: results consumed in job order whatever order the workers finish
// in, never more than `slots` in flight, and the first failure rethrown.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "util/command_line.hpp"
#include "util/ordered_parallel.hpp"

namespace gpuscope::util {
namespace {

TEST(OrderedParallel, ConsumesInJobOrderWithBoundedResultsInFlight) {
  constexpr std::size_t kJobs = 200;
  constexpr std::size_t kSlots = 3;
  std::atomic<int> in_flight{0}, most_in_flight{0};
  std::vector<std::size_t> consumed;
  std::vector<unsigned> workers_seen(4, 0);
  ordered_parallel<std::size_t>(
      kJobs, 4, kSlots,
      [&](std::size_t job, unsigned worker, std::size_t& result) {
        const int now = ++in_flight;
        int most = most_in_flight.load();
        while (now > most && !most_in_flight.compare_exchange_weak(most, now)) {
        }
        // Later jobs finish sooner: without the ordering they would arrive first.
        std::this_thread::sleep_for(std::chrono::microseconds((kJobs - job) % 7 * 50));
        result = job * 10;
        ++workers_seen[worker];
      },
      [&](std::size_t& result) {
        --in_flight;
        consumed.push_back(result);
      });
  ASSERT_EQ(consumed.size(), kJobs);
  for (std::size_t i = 0; i < kJobs; ++i) EXPECT_EQ(consumed[i], i * 10);
  EXPECT_LE(most_in_flight.load(), static_cast<int>(kSlots));
}

TEST(OrderedParallel, RethrowsTheFirstFailureAndStops) {
  std::atomic<std::size_t> produced{0};
  std::vector<int> consumed;
  EXPECT_THROW(ordered_parallel<int>(
                   1000, 2, 2,
                   [&](std::size_t job, unsigned, int& result) {
                     ++produced;
                     if (job == 5) throw std::runtime_error("job 5 failed");
                     result = static_cast<int>(job);
                   },
                   [&](int& result) { consumed.push_back(result); }),
               std::runtime_error);
  EXPECT_LE(consumed.size(), 5u) << "nothing after the failed job is consumed";
  EXPECT_LT(produced.load(), 1000u) << "the workers stop";
}

TEST(OrderedParallel, AFailingConsumerStopsTheWorkers) {
  EXPECT_THROW(ordered_parallel<int>(
                   1000, 2, 2, [](std::size_t job, unsigned, int& r) { r = static_cast<int>(job); },
                   [](int& r) {
                     if (r == 3) throw std::logic_error("consumer");
                   }),
               std::logic_error);
}

TEST(ShellCommandLine, QuotesWhatAShellWouldSplitOrExpand) {
  EXPECT_EQ(shell_command_line({"sleep", "0.5"}), "sleep 0.5");
  EXPECT_EQ(shell_command_line({"sh", "-c", "echo hi; exit 3"}), "sh -c 'echo hi; exit 3'");
  EXPECT_EQ(shell_command_line({"echo", "it's", ""}), "echo 'it'\\''s' ''");
  EXPECT_EQ(shell_command_line({"python", "--lr=0.1", "a/b.py"}), "python --lr=0.1 a/b.py");
}

}  // namespace
}  // namespace gpuscope::util
