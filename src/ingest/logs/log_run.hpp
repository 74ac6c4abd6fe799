// One run of a log (a file, or one host of it): rows streamed to a RunWriter as they are read
// (flushed every few thousand, so memory stays bounded on a 10 GB log), the run's start and
// sampling interval from its first rows, and its GPUs as the log describes them, written at the
// end (a log names its GPUs as it goes). Shared by the log formats (docs/logs.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/device_description.hpp"
#include "core/gpu_process.hpp"
#include "core/health.hpp"
#include "core/run.hpp"
#include "ingest/format.hpp"
#include "ingest/import.hpp"
#include "ingest/run_target.hpp"
#include "ingest/value_screen.hpp"

namespace gpuscope::ingest {

class LogRun {
 public:
  // `info`: the run's fields but its start and interval (from the rows); `interval_ns`: the
  // log's interval where it is known otherwise (0: the median gap between a GPU's rows).
  LogRun(RunTarget& target, RunInfo info, std::int64_t interval_ns = 0);
  ~LogRun();
  LogRun(const LogRun&) = delete;
  LogRun& operator=(const LogRun&) = delete;

  // A row of GPU row.device_index at row.wall_ns (mono_ns is set here), read from line `line`
  // of the log: a value its metric cannot take is left out here and said at the end.
  void push(SampleRow& row, std::int64_t line = 0);
  // The GPU's health counters at row.wall_ns (mono_ns is set here), beside a sample row of the
  // same line: written through to the run's health_samples, in the order pushed.
  void push(const HealthRow& row);
  // Something that happened at event.wall_ns (an Xid the log records; mono_ns is set here).
  void push(Event event);
  // A process the log shows, once, at process.first_wall_ns (first_mono_ns is set here).
  void push(GpuProcess process);
  // What a process held on a GPU at sample.wall_ns (mono_ns is set here).
  void push(const ProcessSample& sample);
  // What the log says about GPU `index` (created with that index on first use).
  DeviceDescription& device(unsigned index);
  // The run's fields, to complete while the first rows are read (used when the run starts).
  RunInfo& info() { return info_; }
  bool has_device(unsigned index) const { return devices_.count(index) != 0; }
  std::int64_t rows() const { return rows_; }
  std::int64_t first_wall_ns() const { return first_ns_; }
  std::int64_t last_wall_ns() const { return last_ns_; }

  // Writes what is left, the run's end (status finished, `problems` kept on the run) and its
  // GPUs. A run without rows writes nothing (false).
  bool finish(std::vector<std::string> problems);

 private:
  void start();
  void write(SampleRow& row);
  void write(HealthRow row);
  void write(Event& event);
  void write(GpuProcess& process);
  void write(ProcessSample sample);

  RunTarget& target_;
  RunInfo info_;
  std::int64_t interval_ns_;
  std::vector<SampleRow> pending_;                   // the first rows, until the start is known
  std::vector<HealthRow> pending_health_;            // and their health rows
  std::vector<Event> pending_events_;                // and events
  std::vector<GpuProcess> pending_processes_;        // and processes
  std::vector<ProcessSample> pending_process_rows_;  // and what they held
  std::unique_ptr<store::RunWriter> writer_;
  std::map<unsigned, DeviceDescription> devices_;
  std::int64_t rows_ = 0;
  std::int64_t since_flush_ = 0;
  std::int64_t first_ns_ = 0;
  std::int64_t last_ns_ = 0;
  bool finished_ = false;
  // Times going back on a GPU (a clock set back, two logs interleaved): said, never reordered.
  std::map<unsigned, std::int64_t> last_of_;
  std::int64_t backwards_ = 0;
  std::int64_t largest_back_ns_ = 0;
  std::int64_t first_back_ns_ = 0;
  ValueScreen screen_;  // values outside their metric's physical range, left out
};

// A log format's read: each input once, each read by a `Log(path, options, target).read()`.
template <typename Log>
void read_each_log(const std::vector<std::filesystem::path>& inputs, const ReadOptions& options,
                   RunTarget& target) {
  for (const auto& input : each_file_once(inputs, target.notes())) {
    Log log(input, options, target);
    log.read();
  }
}

// "1.2 s", "100 ms": an interval for notes.
std::string interval_text(std::int64_t ns);

}  // namespace gpuscope::ingest
