// An ordered parallel ring: jobs worked on by several threads, their results consumed on the
// calling thread in job order, with a bounded number of results in flight.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuscope::util {

// Runs produce(job, worker, result) for jobs 0..n−1 on `workers` threads and hands each result to
// consume(result) on the calling thread in job order, so the analysis sees exactly the sequence
// a single cursor would give. At most `slots` results exist at once (memory stays bounded by
// the slot count, not the job count). The first exception, a worker's or consume's, is rethrown.
template <typename Result, typename Produce, typename Consume>
void ordered_parallel(std::size_t jobs, unsigned workers, std::size_t slots, Produce produce,
                      Consume consume) {
  struct Slot {
    Result result;
    std::size_t job = 0;
    bool ready = false;
  };
  std::vector<Slot> ring(slots);
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t next_job = 0, consumed = 0;
  bool stop = false;
  std::exception_ptr failure;
  auto fail = [&] {
    const std::lock_guard lock(mutex);
    if (!failure) failure = std::current_exception();
    stop = true;
    changed.notify_all();
  };
  auto work = [&](unsigned worker) {
    for (;;) {
      std::size_t job = 0;
      {
        std::unique_lock lock(mutex);
        if (stop || next_job >= jobs) return;
        job = next_job++;
        changed.wait(lock, [&] { return stop || job < consumed + slots; });  // its slot is free
        if (stop) return;
      }
      Slot& slot = ring[job % slots];
      try {
        produce(job, worker, slot.result);
      } catch (...) {
        fail();
        return;
      }
      {
        const std::lock_guard lock(mutex);
        slot.job = job;
        slot.ready = true;
      }
      changed.notify_all();
    }
  };
  std::vector<std::jthread> threads;
  for (unsigned w = 0; w < workers; ++w) threads.emplace_back(work, w);
  try {
    for (std::size_t job = 0; job < jobs; ++job) {
      Slot& slot = ring[job % slots];
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stop || (slot.ready && slot.job == job); });
        if (stop) break;
      }
      consume(slot.result);
      {
        const std::lock_guard lock(mutex);
        slot.ready = false;
        ++consumed;
      }
      changed.notify_all();
    }
  } catch (...) {
    fail();
  }
  threads.clear();  // joins
  if (failure) std::rethrow_exception(failure);
}

}  // namespace gpuscope::util
