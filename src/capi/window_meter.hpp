// What a monitor measures over its windows (docs/c-api.md, "How a window is measured"): a
// SampleSink that keeps, per GPU, running totals of energy, activity and SM active at each
// sample, and answers for a window from the totals at its two edges. An edge between two samples
// is interpolated once the sample after it arrives; an edge after the last sample (a window's
// end, unless settled) is extrapolated from that sample's power and activity. Beginning and
// ending a window take a lock and a few arithmetic operations per GPU, never a driver call. A
// settled end waits (at most `settle_timeout`) for each GPU's next sample and interpolates
// there too, as the analysis of a run database does at a phase's edges.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "collect/sink.hpp"
#include "core/run.hpp"

namespace gpuscope::capi {

enum class EnergySource { None, Counter, IntegratedPower };

struct GpuFigures {
  unsigned index = 0;
  std::string uuid;
  double energy_j = 0;
  EnergySource energy_source = EnergySource::None;
  double mean_power_w = 0;
  double peak_power_w = 0;
  double gpu_util_pct = 0;
  double sm_active_pct = 0;
  unsigned samples = 0;
  bool lost = false;
  bool estimated = false;
};

struct WindowFigures {
  std::uint64_t id = 0;
  std::string name;
  std::int64_t begin_ns = 0;  // CLOCK_MONOTONIC
  std::int64_t end_ns = 0;
  double seconds = 0;
  double energy_j = 0;  // the sum over the GPUs that report energy; NaN if one was lost
  std::vector<GpuFigures> gpus;
};

enum class EndFailure { UnknownWindow, AlreadyEnded };

struct MeteredGpu {
  unsigned index = 0;  // the device's row index (a SampleRow's device_index)
  std::string uuid;
};

class WindowMeter final : public collect::SampleSink {
 public:
  explicit WindowMeter(std::vector<MeteredGpu> gpus,
                       std::chrono::nanoseconds settle_timeout = std::chrono::milliseconds(250));

  void on_sample(const SampleRow& row) override;
  void on_power(const PowerRow& row) override;
  void on_event(const Event& event) override;

  // `now_ns` that says: the time is read under the meter's lock, so that no sample taken after
  // it can have been counted before the window begins or ends (the monitor's calls).
  static constexpr std::int64_t kNow = INT64_MIN;
  // Open windows held at most (each sample visits them all): past it a begin is refused rather
  // than grow without bound for a program that never ends what it begins.
  static constexpr std::size_t kMaxOpen = 65536;

  // A window begun at `now_ns`; its id (1, 2, ...), 0 when kMaxOpen windows are open; the time
  // it began in `*at` when given.
  std::uint64_t begin(std::string name, std::int64_t now_ns, std::int64_t* at = nullptr);
  // Ends window `id` at `now_ns` into `out`; false with `failure` set when there is no such open
  // window. With `settle`, waits for each GPU's first sample after `now_ns` (a GPU whose sample
  // has not come within the settle timeout is extrapolated, as without).
  bool end(std::uint64_t id, std::int64_t now_ns, WindowFigures& out, EndFailure& failure,
           bool settle = false);
  std::size_t open_windows() const;
  std::size_t gpu_count() const { return gpus_.size(); }

 private:
  // Running totals of one GPU since its first sample.
  struct Totals {
    double energy_j = 0;    // the counter's differences, else power integrated
    double util_pct_s = 0;  // GPU activity × seconds
    double util_s = 0;      // the seconds it covers
    double sm_pct_s = 0;    // SM active × seconds
    double sm_s = 0;
  };
  struct Track {
    bool any = false;  // a sample has arrived
    std::int64_t t_ns = 0;
    Totals totals;
    double power_w = 0;   // the last sample's power (NaN: none)
    double util_pct = 0;  // the last sample's activity (NaN: none)
    double sm_pct = 0;
    bool counter_seen = false;
    double last_counter_mj = 0;
    double energy_at_counter_j = 0;  // totals.energy_j at the last counter reading
    bool lost = false;
  };
  struct Edge {
    bool resolved = false;
    Totals totals;
  };
  struct Open {
    std::uint64_t id = 0;
    std::string name;
    std::int64_t begin_ns = 0;
    std::int64_t end_ns = INT64_MAX;  // set while a settled end waits
    std::vector<Edge> begin;          // per GPU
    std::vector<Edge> end;            // per GPU, while a settled end waits
    std::vector<double> peak_w;       // per GPU, NaN: none yet
    std::vector<unsigned> samples;    // per GPU
  };

  static Totals extrapolate(const Track& track, std::int64_t t_ns);
  void advance(Track& track, const SampleRow& row) const;
  void update_window(Open& window, std::size_t slot, const Track& before, const Track& after,
                     const SampleRow& row, double peak);
  bool settled(const Open& window) const;
  void figures_of(const Open& window, std::size_t slot, GpuFigures& out) const;

  std::vector<MeteredGpu> gpus_;
  std::chrono::nanoseconds settle_timeout_;
  mutable std::mutex mutex_;
  std::condition_variable sampled_;
  std::vector<Track> tracks_;
  std::vector<Open> open_;
  std::uint64_t next_id_ = 1;
};

}  // namespace gpuscope::capi
