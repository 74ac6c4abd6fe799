// The GPU settings a sweep changes (power limits, locked SM clocks): what the GPUs allow, the
// permission check, setting them, and putting them back. RestoreGuard is the safety net: every
// way out of a sweep (success, a failed trial, a signal, an exception) goes through it, and
// what it cannot restore is left in the restore record for `gpuscope sweep --restore`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "collect/gpu_control.hpp"
#include "core/sweep.hpp"
#include "sweep/restore_record.hpp"

namespace gpuscope::app {

// What the selected GPUs allow and where they stand now.
struct SettingLimits {
  double min = 0, max = 0, baseline = 0;  // the common range and the baseline setting
  double p_max_w = 0;                     // the sum of the GPUs' largest power limits
  std::vector<sweep::RestoreEntry> now;   // what restoring puts back
  std::vector<std::string> notes;         // for the user (a limit not at its default, ...)
};

// Reads the GPUs' ranges and current settings for `knob`; throws Error when a GPU does not
// report them (an AMD GPU with --clocks: AMD GPUs are swept by power cap).
SettingLimits read_setting_limits(const collect::GpuControls& gpus, sweep::Knob knob);

// Sets each GPU's current setting again (which changes nothing) to learn whether we may change
// it; throws Error saying why not (no permission: run as root; not supported).
void check_setting_permission(const collect::GpuControls& gpus, const SettingLimits& limits,
                              sweep::Knob knob);

// Sets every GPU to `value` (W or MHz); throws Error when one refuses.
void apply_setting(const collect::GpuControls& gpus, sweep::Knob knob, double value);
// Sets every GPU to the baseline: the default power limit, or clocks unlocked.
void apply_baseline(const collect::GpuControls& gpus, sweep::Knob knob,
                    const SettingLimits& limits);

// Puts the GPUs back as the restore record says, among the node's `gpus` (found by UUID where it
// has one). Returns the problems, one line each (empty: all restored). `verbose` says on stderr
// what was restored.
std::vector<std::string> restore_gpus(const collect::GpuControls& gpus,
                                      const sweep::RestoreRecord& record, bool verbose);

// Restores the GPUs when it is destroyed, or earlier by restore(), whichever way the sweep ends
// (an exception included), and deletes the restore record at `path` once everything is back;
// otherwise keeps it and says how to finish with `gpuscope sweep --restore`.
class RestoreGuard {
 public:
  RestoreGuard(const collect::GpuControls& gpus, sweep::RestoreRecord record,
               std::filesystem::path path);
  ~RestoreGuard();
  RestoreGuard(const RestoreGuard&) = delete;
  RestoreGuard& operator=(const RestoreGuard&) = delete;

  // Restores once (later calls return the first answer); true when every GPU is back as it was.
  // Never throws.
  bool restore() noexcept;
  bool restored() const { return done_ && ok_; }

 private:
  const collect::GpuControls& gpus_;
  sweep::RestoreRecord record_;
  std::filesystem::path path_;
  bool done_ = false;
  bool ok_ = false;
};

}  // namespace gpuscope::app
