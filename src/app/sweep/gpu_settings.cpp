#include "app/sweep/gpu_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <system_error>

#include "core/error.hpp"

namespace gpuscope::app {

namespace fs = std::filesystem;
using sweep::Knob;

namespace {

// The setting's range on one GPU: [min, max] and the baseline (W for power limits, MHz for clocks).
void add_range(SettingLimits& l, const collect::GpuControl& gpu, const collect::PowerLimits& power,
               Knob knob, bool first) {
  if (knob == Knob::PowerLimit) {
    l.min = std::max(l.min, power.min_w);
    l.max = std::min(l.max, power.max_w);
    if (first) {
      l.baseline = power.default_w;
    } else if (std::abs(l.baseline - power.default_w) > 1e-9) {
      l.notes.push_back(fmt::format(
          "the GPUs' default limits differ; savings are measured against {:g} W", l.baseline));
    }
    return;
  }
  auto max_clock = gpu.max_sm_clock_mhz();
  if (!max_clock) {
    throw Error(fmt::format("GPU {} does not report its maximum SM clock", gpu.index()),
                max_clock.error().words, max_clock.error().fix);
  }
  l.max = std::min(l.max, static_cast<double>(*max_clock));
  l.baseline = l.max;
}

}  // namespace

SettingLimits read_setting_limits(const collect::GpuControls& gpus, Knob knob) {
  SettingLimits l;
  l.min = 0;
  l.max = 1e18;
  bool first = true;
  for (const auto& gpu : gpus) {
    const auto power = gpu->power_limits();
    if (!power) {
      throw Error(fmt::format("GPU {} does not report its power limits", gpu->index()),
                  power.error().words,
                  "power sweeps need a GPU with power management (NVIDIA Volta+, AMD Instinct)");
    }
    sweep::RestoreEntry entry;
    entry.index = gpu->index();
    entry.uuid = gpu->uuid();
    entry.power_limit_mw = static_cast<unsigned>(std::lround(power->current_w * 1000));
    entry.clocks_locked = knob == Knob::SmClock;
    l.now.push_back(entry);
    l.p_max_w += power->max_w;
    if (std::abs(power->current_w - power->default_w) > 1e-9) {
      l.notes.push_back(fmt::format(
          "GPU {}'s power limit is {:g} W, not its default {:g} W (an earlier sweep or an "
          "administrator set it); it is what the sweep restores",
          gpu->index(), power->current_w, power->default_w));
    }
    add_range(l, *gpu, *power, knob, first);
    first = false;
  }
  return l;
}

// Setting the current limit again changes nothing and says whether we may change it.
void check_setting_permission(const collect::GpuControls& gpus, const SettingLimits& limits,
                              Knob knob) {
  for (std::size_t k = 0; k < gpus.size() && k < limits.now.size(); ++k) {
    const collect::GpuControl& gpu = *gpus[k];
    const auto& entry = limits.now[k];
    const auto status = knob == Knob::PowerLimit
                            ? gpu.set_power_limit_w(entry.power_limit_mw / 1000.0)
                            : gpu.unlock_clocks();
    if (status) continue;
    const std::string& words = status.error().words;
    const std::string what = knob == Knob::PowerLimit ? "power limits" : "locked SM clocks";
    if (status.error().problem == collect::ControlProblem::Permission) {
      throw Error(
          fmt::format("no permission to set {} on GPU {}", what, entry.index), words,
          "a sweep needs root: run it with sudo (or as root in the job's prolog), or ask an "
          "administrator; nothing was changed and no trial ran");
    }
    if (status.error().problem == collect::ControlProblem::Unsupported) {
      throw Error(fmt::format("GPU {} cannot have its {} set", entry.index, what), words,
                  knob == Knob::SmClock ? "locked clocks need an NVIDIA GPU (Volta or newer) and a "
                                          "recent driver"
                                        : "this GPU or driver does not allow power capping");
    }
    throw Error(fmt::format("cannot set {} on GPU {}", what, entry.index), words,
                "nothing was changed; check gpuscope devices");
  }
}

namespace {

const collect::GpuControl* find_gpu(const collect::GpuControls& gpus,
                                    const sweep::RestoreEntry& entry) {
  for (const auto& gpu : gpus) {
    if (entry.uuid.empty() ? gpu->index() == entry.index : gpu->uuid() == entry.uuid) {
      return gpu.get();
    }
  }
  return nullptr;
}

}  // namespace

// Puts the GPUs back as the restore record says. Returns the problems (empty: all restored).
std::vector<std::string> restore_gpus(const collect::GpuControls& gpus,
                                      const sweep::RestoreRecord& record, bool verbose) {
  std::vector<std::string> problems;
  for (const auto& entry : record.gpus) {
    const collect::GpuControl* gpu = find_gpu(gpus, entry);
    if (gpu == nullptr) {
      problems.push_back(
          fmt::format("GPU {} ({}) not found among the node's GPUs", entry.index, entry.uuid));
      continue;
    }
    if (entry.clocks_locked) {
      if (auto s = gpu->unlock_clocks();
          !s && s.error().problem != collect::ControlProblem::Unsupported) {
        problems.push_back(fmt::format("GPU {}: resetting locked clocks failed: {}", entry.index,
                                       s.error().words));
      }
    }
    if (auto s = gpu->set_power_limit_w(entry.power_limit_mw / 1000.0); !s) {
      problems.push_back(fmt::format("GPU {}: restoring the power limit to {:g} W failed: {}",
                                     entry.index, entry.power_limit_mw / 1000.0, s.error().words));
      continue;
    }
    if (verbose) {
      fmt::print(stderr, "gpuscope: GPU {} restored: power limit {:g} W{}\n", entry.index,
                 entry.power_limit_mw / 1000.0, entry.clocks_locked ? ", clocks unlocked" : "");
    }
  }
  return problems;
}

void apply_setting(const collect::GpuControls& gpus, Knob knob, double value) {
  for (const auto& gpu : gpus) {
    const auto mhz = static_cast<unsigned>(std::lround(value));
    const auto status =
        knob == Knob::PowerLimit ? gpu->set_power_limit_w(value) : gpu->lock_sm_clock_mhz(mhz);
    if (!status) {
      throw Error(
          fmt::format("cannot set GPU {} to {:g} {}", gpu->index(), value, sweep::knob_unit(knob)),
          status.error().words, "the sweep stops here; the GPUs are being restored");
    }
  }
}

void apply_baseline(const collect::GpuControls& gpus, Knob knob, const SettingLimits& limits) {
  if (knob == Knob::PowerLimit) {
    apply_setting(gpus, knob, limits.baseline);
    return;
  }
  for (const auto& gpu : gpus) {
    if (auto s = gpu->unlock_clocks(); !s) {
      throw Error(fmt::format("cannot unlock GPU {}'s clocks", gpu->index()), s.error().words);
    }
  }
}

RestoreGuard::RestoreGuard(const collect::GpuControls& gpus, sweep::RestoreRecord record,
                           std::filesystem::path path)
    : gpus_(gpus), record_(std::move(record)), path_(std::move(path)) {}

RestoreGuard::~RestoreGuard() {
  if (!done_) restore();
}

bool RestoreGuard::restore() noexcept {
  if (done_) return ok_;
  done_ = true;
  try {
    const auto problems = restore_gpus(gpus_, record_, true);
    for (const auto& p : problems) fmt::print(stderr, "gpuscope: error: {}\n", p);
    ok_ = problems.empty();
    std::error_code ignored;
    if (ok_) {
      fs::remove(path_, ignored);
    } else {
      fmt::print(stderr,
                 "gpuscope: the restore record {} is kept; run 'gpuscope sweep --restore -o {}' "
                 "once the GPUs are reachable\n",
                 path_.string(), record_.output);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr,
               "gpuscope: error: restoring the GPUs failed: {}; run 'gpuscope sweep "
               "--restore -o {}'\n",
               e.what(), record_.output);
    ok_ = false;
  }
  return ok_;
}

}  // namespace gpuscope::app
