#include "app/live/live_gpus.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "collect/describe.hpp"
#include "collect/gpu_selection.hpp"
#include "core/error.hpp"

namespace gpuscope::app {

namespace {

// The devices to watch: each GPU selected, followed by its MIG devices when they are wanted.
std::vector<unsigned> watched_rows(const collect::GpuSelection& selection,
                                   const std::vector<DeviceDescription>& devices,
                                   bool mig_devices) {
  std::vector<unsigned> rows;
  for (unsigned gpu : selection.indices) {
    rows.push_back(gpu);
    if (!mig_devices) continue;
    for (unsigned row : selection.instances) {
      if (collect::device_at(devices, row).mig->parent_index == gpu) rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace

LiveGpus open_live_gpus(const collect::BackendOptions& backend, const std::string& gpus_list,
                        std::chrono::nanoseconds interval, bool mig_devices) {
  LiveGpus gpus;
  gpus.node = collect::open_node_gpus(backend);
  const collect::MigResolver mig = collect::mig_resolver(gpus.node);
  const collect::GpuSelection selection =
      collect::select_gpus(gpus_list.empty() ? "all" : gpus_list, gpus.node.system.devices, mig);
  std::vector<std::string> notes = gpus.node.notes;
  notes.insert(notes.end(), selection.notes.begin(), selection.notes.end());
  if (mig_devices)
    notes.insert(notes.end(), selection.mig_notes.begin(), selection.mig_notes.end());
  const std::vector<unsigned> rows = watched_rows(selection, gpus.node.system.devices, mig_devices);
  std::vector<DeviceDescription> watched;
  for (unsigned index : rows)
    watched.push_back(collect::device_at(gpus.node.system.devices, index));
  collect::OpenedReaders opened =
      collect::open_node_readers(gpus.node, rows, watched, backend, interval);
  gpus.readers = std::move(opened.readers);
  notes.insert(notes.end(), opened.notes.begin(), opened.notes.end());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    for (auto& d : gpus.node.system.devices) {
      if (d.index == rows[k]) d = watched[k];
    }
  }
  gpus.identities = exporter::identities_of(watched);
  gpus.gpu_count = selection.indices.size();
  for (const auto& note : notes) fmt::print(stderr, "gpuscope: {}\n", note);
  if (gpus.readers.empty()) {
    throw Error::usage("no GPU to watch", {},
                       "check --gpus, or run 'gpuscope devices' to see the GPUs the driver has");
  }
  return gpus;
}

std::chrono::nanoseconds sampling_interval(double interval_ms, const char* option) {
  constexpr double kMinMs = 10;
  if (!(interval_ms >= kMinMs) || interval_ms > 3'600'000) {
    throw Error::usage(fmt::format("{} {} is out of range", option, interval_ms), {},
                       fmt::format("give milliseconds from {} to 3600000", kMinMs));
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double, std::milli>(interval_ms));
}

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
}

StopSignals::~StopSignals() {
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

bool StopSignals::wait(std::chrono::nanoseconds timeout) {
  const auto ns = timeout.count() < 0 ? 0 : timeout.count();
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  for (;;) {
    const int signal_number = sigtimedwait(&set_, nullptr, &ts);
    if (signal_number > 0) return true;
    if (errno == EAGAIN) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace gpuscope::app
