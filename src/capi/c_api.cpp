// The C interface of gpuscope.h over capi::Monitor: every call catches what the C++ side throws
// and turns it into a status and this thread's message, so that no exception crosses the ABI.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "capi/monitor.hpp"
#include "core/version.hpp"
#include "gpuscope.h"

struct gpuscope_monitor {
  std::unique_ptr<gpuscope::capi::Monitor> monitor;
};

namespace {

using gpuscope::capi::EndFailure;
using gpuscope::capi::EnergySource;
using gpuscope::capi::Monitor;
using gpuscope::capi::MonitorError;
using gpuscope::capi::WindowFigures;

thread_local std::string last_error;

gpuscope_status fail(gpuscope_status status, std::string message) {
  last_error = std::move(message);
  return status;
}

gpuscope_status succeed() {
  last_error.clear();
  return GPUSCOPE_OK;
}

// Runs `body`, turning whatever it throws into a status.
template <class Body>
gpuscope_status guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const MonitorError& e) {
    return fail(e.kind() == MonitorError::Kind::NoGpu ? GPUSCOPE_ERROR_NO_GPU
                                                      : GPUSCOPE_ERROR_INVALID_ARGUMENT,
                e.what());
  } catch (const std::bad_alloc&) {
    return fail(GPUSCOPE_ERROR_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return fail(GPUSCOPE_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(GPUSCOPE_ERROR_INTERNAL, "an unknown C++ exception");
  }
}

// A monitor usable from this process, else the status that says why not.
gpuscope_status usable(const gpuscope_monitor* m) {
  if (m == nullptr || !m->monitor) {
    return fail(GPUSCOPE_ERROR_INVALID_ARGUMENT, "the monitor is NULL");
  }
  if (getpid() != m->monitor->owner()) {
    return fail(GPUSCOPE_ERROR_FORKED,
                fmt::format("the monitor was opened by process {}, the parent of this one ({}); "
                            "open a monitor in this process",
                            m->monitor->owner(), getpid()));
  }
  return GPUSCOPE_OK;
}

gpuscope_energy_source to_c(EnergySource source) {
  switch (source) {
    case EnergySource::Counter:
      return GPUSCOPE_ENERGY_COUNTER;
    case EnergySource::IntegratedPower:
      return GPUSCOPE_ENERGY_INTEGRATED_POWER;
    case EnergySource::None:
      break;
  }
  return GPUSCOPE_ENERGY_NONE;
}

void copy_out(const WindowFigures& figures, gpuscope_window* window, gpuscope_gpu_window* gpus,
              size_t capacity) {
  if (window != nullptr) {
    window->id = figures.id;
    window->seconds = figures.seconds;
    window->energy_j = figures.energy_j;
    window->gpu_count = static_cast<unsigned>(figures.gpus.size());
  }
  for (size_t k = 0; gpus != nullptr && k < capacity && k < figures.gpus.size(); ++k) {
    const auto& f = figures.gpus[k];
    gpuscope_gpu_window& g = gpus[k];
    g.index = f.index;
    std::snprintf(g.uuid, sizeof g.uuid, "%s", f.uuid.c_str());
    g.energy_j = f.energy_j;
    g.energy_source = to_c(f.energy_source);
    g.mean_power_w = f.mean_power_w;
    g.peak_power_w = f.peak_power_w;
    g.gpu_util_pct = f.gpu_util_pct;
    g.sm_active_pct = f.sm_active_pct;
    g.samples = f.samples;
    g.lost = f.lost ? 1 : 0;
    g.estimated = f.estimated ? 1 : 0;
  }
}

}  // namespace

extern "C" {

void gpuscope_options_init(gpuscope_options* options) {
  if (options == nullptr) return;
  *options = gpuscope_options{};
  options->struct_size = sizeof(gpuscope_options);
  options->marks = 1;
}

void gpuscope_window_init(gpuscope_window* window) {
  if (window == nullptr) return;
  *window = gpuscope_window{};
  window->struct_size = sizeof(gpuscope_window);
}

void gpuscope_gpu_window_init(gpuscope_gpu_window* gpu, size_t count) {
  for (size_t k = 0; gpu != nullptr && k < count; ++k) {
    gpu[k] = gpuscope_gpu_window{};
    gpu[k].struct_size = sizeof(gpuscope_gpu_window);
  }
}

gpuscope_status gpuscope_monitor_open(const gpuscope_options* options, gpuscope_monitor** out) {
  return guarded([&] {
    if (out == nullptr) return fail(GPUSCOPE_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = nullptr;
    gpuscope::capi::MonitorOptions o;
    if (options != nullptr) {
      if (options->struct_size < sizeof(gpuscope_options)) {
        return fail(GPUSCOPE_ERROR_INVALID_ARGUMENT,
                    "options->struct_size is not sizeof(gpuscope_options): call "
                    "gpuscope_options_init first");
      }
      if (options->sampling_ms != 0) o.sampling_ms = options->sampling_ms;
      o.energy_counter_ms = options->energy_counter_ms;
      if (options->gpus != nullptr) o.gpus = options->gpus;
      o.marks = options->marks != 0;
      o.settle = options->settle != 0;
    }
    auto handle = std::make_unique<gpuscope_monitor>();
    handle->monitor = std::make_unique<Monitor>(o);
    *out = handle.release();
    return succeed();
  });
}

gpuscope_status gpuscope_monitor_close(gpuscope_monitor* monitor) {
  return guarded([&] {
    if (monitor == nullptr) return fail(GPUSCOPE_ERROR_INVALID_ARGUMENT, "the monitor is NULL");
    if (const gpuscope_status status = usable(monitor); status != GPUSCOPE_OK) {
      // A fork's child cannot stop its parent's threads: the copy is left as it is.
      return status;
    }
    const std::size_t open = monitor->monitor->open_windows();
    delete monitor;
    if (open > 0) {
      return fail(GPUSCOPE_ERROR_WINDOWS_OPEN,
                  fmt::format("{} window{} never ended; {} lost", open,
                              open == 1 ? " was" : "s were", open == 1 ? "it is" : "they are"));
    }
    return succeed();
  });
}

gpuscope_status gpuscope_monitor_gpu_count(const gpuscope_monitor* monitor, unsigned* count) {
  return guarded([&] {
    if (const gpuscope_status status = usable(monitor); status != GPUSCOPE_OK) return status;
    if (count == nullptr) return fail(GPUSCOPE_ERROR_INVALID_ARGUMENT, "count is NULL");
    *count = static_cast<unsigned>(monitor->monitor->gpu_count());
    return succeed();
  });
}

gpuscope_status gpuscope_monitor_open_windows(const gpuscope_monitor* monitor, unsigned* count) {
  return guarded([&] {
    if (const gpuscope_status status = usable(monitor); status != GPUSCOPE_OK) return status;
    if (count == nullptr) return fail(GPUSCOPE_ERROR_INVALID_ARGUMENT, "count is NULL");
    *count = static_cast<unsigned>(monitor->monitor->open_windows());
    return succeed();
  });
}

gpuscope_status gpuscope_window_begin(gpuscope_monitor* monitor, const char* name, uint64_t* id) {
  return guarded([&] {
    if (const gpuscope_status status = usable(monitor); status != GPUSCOPE_OK) return status;
    if (name == nullptr || id == nullptr) {
      return fail(GPUSCOPE_ERROR_INVALID_ARGUMENT, name == nullptr ? "name is NULL" : "id is NULL");
    }
    const std::size_t length = std::strlen(name);
    if (length > 512) {
      return fail(GPUSCOPE_ERROR_INVALID_ARGUMENT,
                  fmt::format("the window's name is {} bytes long; at most 512", length));
    }
    *id = monitor->monitor->begin({name, length});
    if (*id == 0) {
      return fail(GPUSCOPE_ERROR_TOO_MANY_WINDOWS,
                  "65536 windows are open on this monitor and none was ended; end windows "
                  "before beginning more (each sample visits every open window)");
    }
    return succeed();
  });
}

gpuscope_status gpuscope_window_end(gpuscope_monitor* monitor, uint64_t id, gpuscope_window* window,
                                    gpuscope_gpu_window* gpus, size_t capacity) {
  return guarded([&] {
    if (const gpuscope_status status = usable(monitor); status != GPUSCOPE_OK) return status;
    if (gpus == nullptr && capacity > 0) {
      return fail(GPUSCOPE_ERROR_INVALID_ARGUMENT, "gpus is NULL but capacity is not 0");
    }
    thread_local WindowFigures figures;  // kept: no allocation per window once warm
    EndFailure failure{};
    if (!monitor->monitor->end(id, figures, failure)) {
      return failure == EndFailure::AlreadyEnded
                 ? fail(GPUSCOPE_ERROR_WINDOW_ENDED, fmt::format("window {} was ended already", id))
                 : fail(GPUSCOPE_ERROR_UNKNOWN_WINDOW,
                        fmt::format("no window {} was begun on this monitor", id));
    }
    copy_out(figures, window, gpus, capacity);
    return succeed();
  });
}

const char* gpuscope_last_error(void) {
  return last_error.c_str();
}

const char* gpuscope_status_string(gpuscope_status status) {
  switch (status) {
    case GPUSCOPE_OK:
      return "success";
    case GPUSCOPE_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case GPUSCOPE_ERROR_NO_GPU:
      return "no GPU";
    case GPUSCOPE_ERROR_UNKNOWN_WINDOW:
      return "unknown window";
    case GPUSCOPE_ERROR_WINDOW_ENDED:
      return "window ended already";
    case GPUSCOPE_ERROR_FORKED:
      return "monitor of the parent process";
    case GPUSCOPE_ERROR_WINDOWS_OPEN:
      return "windows never ended";
    case GPUSCOPE_ERROR_INTERNAL:
      return "internal error";
    case GPUSCOPE_ERROR_TOO_MANY_WINDOWS:
      return "too many windows open";
  }
  return "unknown status";
}

const char* gpuscope_version(void) {
  return gpuscope::kVersion;
}

}  // extern "C"
