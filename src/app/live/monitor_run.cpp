#include "app/live/monitor_run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <thread>

#include "app/live/live_gpus.hpp"
#include "app/profile/node_watch.hpp"
#include "app/profile/run_context.hpp"
#include "collect/sampler.hpp"
#include "core/json_text.hpp"
#include "exporter/latest_values.hpp"
#include "exporter/monitor_view.hpp"

namespace gpuscope::app {
namespace {

// Health counters change rarely; Xids are polled at the sampling cadence all the same.
constexpr std::chrono::nanoseconds kMonitorHealthInterval = std::chrono::seconds(5);

std::string clock_text() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[16];
  std::strftime(buffer, sizeof(buffer), "%H:%M:%S", &local);
  return buffer;
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// One snapshot: sample until every GPU has been read twice (GPM needs two reads 100 ms apart).
// Three ticks 100 ms apart: GPM and DCGM both need two samples of their counters for an average.
int run_once(const MonitorRun& o, LiveGpus& gpus) {
  exporter::LatestValues latest(gpus.identities);
  collect::Sampler sampler(std::move(gpus.readers),
                           {std::chrono::milliseconds(100), {}, kMonitorHealthInterval}, latest);
  sampler.start();
  for (int waited_ms = 0; sampler.stats().ticks < 3 && waited_ms < 10'000; waited_ms += 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  sampler.stop();
  const exporter::Snapshot snapshot = latest.snapshot();
  if (o.json) {
    fmt::print("{}\n", json_text(exporter::monitor_json(snapshot), 2));
  } else {
    fmt::print("{}", exporter::monitor_table(snapshot));
  }
  return 0;
}

}  // namespace

int run_monitor(const MonitorRun& o) {
  StopSignals stop;  // before any thread, so every thread blocks SIGINT/SIGTERM
  const auto interval = sampling_interval(o.interval_ms, "--interval");
  // --once samples every 100 ms, and DCGM's watch must keep up with that.
  LiveGpus gpus = open_live_gpus(
      o.backend, o.gpus,
      o.once ? std::chrono::nanoseconds(std::chrono::milliseconds(100)) : interval, true);
  if (o.once) return run_once(o, gpus);

  exporter::LatestValues latest(gpus.identities);
  const std::size_t count = gpus.gpu_count;
  NodeEnergyLive node = node_energy_live(o.node_energy && !o.json, o.sysfs_root, {});
  collect::Sampler sampler(std::move(gpus.readers), {interval, {}, kMonitorHealthInterval}, latest,
                           node.attach(latest));
  sampler.start();
  const bool terminal = !o.json && isatty(STDOUT_FILENO) != 0;
  const std::string host = short_host_name();
  exporter::InPlaceFrame frame;
  if (terminal) write_all(STDOUT_FILENO, "\033[?25l");  // hide the cursor while redrawing
  // The first frame as soon as the first sample is in, then one per interval.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  do {
    const exporter::Snapshot snapshot = latest.snapshot();
    if (o.json) {
      write_all(STDOUT_FILENO, json_text(exporter::monitor_json(snapshot)) + "\n");
      continue;
    }
    std::string text = fmt::format("gpuscope monitor · {} · {} GPU{} · every {} ms · {}{}\n", host,
                                   count, count == 1 ? "" : "s", o.interval_ms, clock_text(),
                                   terminal ? " · Ctrl-C to stop" : "");
    text += exporter::monitor_table(snapshot);
    if (node.series) {
      const std::string power = node.series->power_line();
      text += "Node: " +
              (power.empty() ? std::string("CPU and memory power after two readings") : power) +
              "\n";
    }
    write_all(STDOUT_FILENO, terminal ? frame.redraw(text) : text + "\n");
  } while (!stop.wait(interval));
  if (terminal) write_all(STDOUT_FILENO, "\033[?25h");
  sampler.stop();
  return 0;
}

}  // namespace gpuscope::app
