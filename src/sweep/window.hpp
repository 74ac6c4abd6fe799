// The measured window of a sweep trial (docs/sweep.md, "What a trial measures"): a counter's value
// at any moment from readings taken around it, and the time stamps a job may print to mark where
// its work begins and ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace gpuscope::sweep {

// Readings of a cumulative counter (a GPU's energy counter, mJ) against CLOCK_MONOTONIC, and its
// value at any moment between two readings by linear interpolation, so that the energy of a
// window whose edges fall between readings (a job's own time stamps) is measured over exactly
// that window. Readings must be added in time order. Memory stays bounded: when max_readings are
// held, every other one is dropped (the first and the last are kept), so a long trial keeps
// readings everywhere, only further apart.
class CounterTrack {
 public:
  explicit CounterTrack(std::size_t max_readings = 4096);

  // A reading taken at mono_ns; one older than the last reading is ignored.
  void add(std::int64_t mono_ns, double value);
  // The value at mono_ns: interpolated between the readings around it, the first (last)
  // reading's value before (after) them; nullopt without readings.
  std::optional<double> at(std::int64_t mono_ns) const;
  std::size_t size() const { return readings_.size(); }

 private:
  struct Reading {
    std::int64_t mono_ns;
    double value;
  };
  std::size_t max_readings_;
  std::vector<Reading> readings_;
};

// A window marker (--window-begin/--window-end): the compiled pattern. Throws Error::usage naming
// `option` when it is not a valid regular expression or has more than one group.
std::regex compile_marker(const std::string& pattern, const std::string& option);

// When a marker line says its moment was. With a group in the pattern, the group is the job's
// own CLOCK_MONOTONIC time stamp in seconds (Python's time.monotonic(), C++'s steady_clock):
// used when it lies between the job's start and the line's arrival (1 ms of slack either way),
// as it must for a stamp of that clock. Otherwise the line's arrival time.
struct MarkerTime {
  std::int64_t mono_ns = 0;
  bool from_job = false;  // the job's own stamp was used
  std::string problem;    // why a stamp that was there was not used ("" when none)
};
MarkerTime marker_time(const std::smatch& match, std::int64_t job_start_mono_ns,
                       std::int64_t arrival_mono_ns);

}  // namespace gpuscope::sweep
