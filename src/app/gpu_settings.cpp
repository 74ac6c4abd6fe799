#include "app/gpu_settings.hpp"

#include <fmt/format.h>

#include <cmath>
#include <system_error>

#include "core/error.hpp"

namespace gpuscope::app {

namespace fs = std::filesystem;
using sweep::Knob;

SettingLimits read_setting_limits(const nvml::Session& session,
                                  const std::vector<unsigned>& indices, Knob knob) {
  SettingLimits l;
  l.min = 0;
  l.max = 1e18;
  bool first = true;
  for (unsigned index : indices) {
    const nvml::Device device = session.device(index);
    const auto& library = device.library();
    auto constraints = device.power_limit_constraints_mw();
    auto current = device.power_limit_mw();
    auto default_limit = device.default_power_limit_mw();
    if (!constraints || !current || !default_limit) {
      const nvml::Failure f =
          !constraints ? constraints.error() : (!current ? current.error() : default_limit.error());
      throw Error(fmt::format("GPU {} does not report its power limits", index),
                  library.describe(f), "power sweeps need a GPU with power management (Volta+)");
    }
    sweep::RestoreEntry entry;
    entry.index = index;
    entry.uuid = device.uuid().value_or("");
    entry.power_limit_mw = *current;
    entry.clocks_locked = knob == Knob::SmClock;
    l.now.push_back(entry);
    l.p_max_w += constraints->max_mw / 1000.0;
    if (*current != *default_limit) {
      l.notes.push_back(fmt::format(
          "GPU {}'s power limit is {:g} W, not its default {:g} W (an earlier sweep or an "
          "administrator set it); it is what the sweep restores",
          index, *current / 1000.0, *default_limit / 1000.0));
    }
    if (knob == Knob::PowerLimit) {
      l.min = std::max(l.min, constraints->min_mw / 1000.0);
      l.max = std::min(l.max, constraints->max_mw / 1000.0);
      if (first) {
        l.baseline = *default_limit / 1000.0;
      } else if (std::abs(l.baseline - *default_limit / 1000.0) > 1e-9) {
        l.notes.push_back(fmt::format(
            "the GPUs' default limits differ; savings are measured against {:g} W", l.baseline));
      }
    } else {
      auto max_clock = device.max_clock_mhz(nvml::ClockType::Sm);
      if (!max_clock) {
        throw Error(fmt::format("GPU {} does not report its maximum SM clock", index),
                    library.describe(max_clock.error()));
      }
      l.max = std::min(l.max, static_cast<double>(*max_clock));
      l.baseline = l.max;
    }
    first = false;
  }
  return l;
}

// Setting the current limit again changes nothing and says whether we may change it.
void check_setting_permission(const nvml::Session& session, const SettingLimits& limits,
                              Knob knob) {
  for (const auto& entry : limits.now) {
    const nvml::Device device = session.device(entry.index);
    nvml::Status status = knob == Knob::PowerLimit ? device.set_power_limit_mw(entry.power_limit_mw)
                                                   : device.reset_locked_clocks();
    if (status) continue;
    const auto code = status.error().code;
    const std::string words = device.library().describe(status.error());
    const std::string what = knob == Knob::PowerLimit ? "power limits" : "locked SM clocks";
    if (code == nvml::kErrorNoPermission) {
      throw Error(
          fmt::format("no permission to set {} on GPU {}", what, entry.index), words,
          "a sweep needs root: run it with sudo (or as root in the job's prolog), or ask an "
          "administrator; nothing was changed and no trial ran");
    }
    if (code == nvml::kErrorNotSupported || code == nvml::kErrorFunctionNotFound) {
      throw Error(fmt::format("GPU {} cannot have its {} set", entry.index, what), words,
                  knob == Knob::SmClock ? "locked clocks need Volta or newer and a recent driver"
                                        : "this GPU or driver does not allow power capping");
    }
    throw Error(fmt::format("cannot set {} on GPU {}", what, entry.index), words,
                "nothing was changed; check gpuscope devices");
  }
}

// Puts the GPUs back as the restore record says. Returns the problems (empty: all restored).
std::vector<std::string> restore_gpus(const nvml::Session& session,
                                      const sweep::RestoreRecord& record, bool verbose) {
  std::vector<std::string> problems;
  for (const auto& entry : record.gpus) {
    nvml::Expected<nvml::Device> device =
        entry.uuid.empty() ? session.try_device(entry.index) : session.device_by_uuid(entry.uuid);
    if (!device) {
      problems.push_back(fmt::format("GPU {} ({}) not found: {}", entry.index, entry.uuid,
                                     session.library()->describe(device.error())));
      continue;
    }
    if (entry.clocks_locked) {
      if (auto s = device->reset_locked_clocks();
          !s && s.error().code != nvml::kErrorNotSupported) {
        problems.push_back(fmt::format("GPU {}: resetting locked clocks failed: {}", entry.index,
                                       session.library()->describe(s.error())));
      }
    }
    if (auto s = device->set_power_limit_mw(entry.power_limit_mw); !s) {
      problems.push_back(fmt::format("GPU {}: restoring the power limit to {:g} W failed: {}",
                                     entry.index, entry.power_limit_mw / 1000.0,
                                     session.library()->describe(s.error())));
      continue;
    }
    if (verbose) {
      fmt::print(stderr, "gpuscope: GPU {} restored: power limit {:g} W{}\n", entry.index,
                 entry.power_limit_mw / 1000.0, entry.clocks_locked ? ", clocks unlocked" : "");
    }
  }
  return problems;
}

void apply_setting(const nvml::Session& session, const std::vector<unsigned>& indices, Knob knob,
                   double value) {
  for (unsigned index : indices) {
    const nvml::Device device = session.device(index);
    const auto mhz = static_cast<unsigned>(std::lround(value));
    nvml::Status status =
        knob == Knob::PowerLimit
            ? device.set_power_limit_mw(static_cast<unsigned>(std::lround(value * 1000)))
            : device.set_locked_clocks_mhz(mhz, mhz);
    if (!status) {
      throw Error(fmt::format("cannot set GPU {} to {:g} {}", index, value, sweep::knob_unit(knob)),
                  device.library().describe(status.error()),
                  "the sweep stops here; the GPUs are being restored");
    }
  }
}

void apply_baseline(const nvml::Session& session, const std::vector<unsigned>& indices, Knob knob,
                    const SettingLimits& limits) {
  if (knob == Knob::PowerLimit) {
    apply_setting(session, indices, knob, limits.baseline);
    return;
  }
  for (unsigned index : indices) {
    const nvml::Device device = session.device(index);
    if (auto s = device.reset_locked_clocks(); !s) {
      throw Error(fmt::format("cannot unlock GPU {}'s clocks", index),
                  device.library().describe(s.error()));
    }
  }
}

RestoreGuard::RestoreGuard(const nvml::Session& session, sweep::RestoreRecord record,
                           std::filesystem::path path)
    : session_(session), record_(std::move(record)), path_(std::move(path)) {}

RestoreGuard::~RestoreGuard() {
  if (!done_) restore();
}

bool RestoreGuard::restore() noexcept {
  if (done_) return ok_;
  done_ = true;
  try {
    const auto problems = restore_gpus(session_, record_, true);
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
