#include "collect/sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <ctime>

#include "core/clock.hpp"
#include "core/clock_events.hpp"
#include "core/event_kinds.hpp"

namespace gpuscope::collect {
namespace {

class SystemClock final : public SamplerClock {
 public:
  std::int64_t mono_ns() override { return mono_now_ns(); }
  std::int64_t wall_ns() override { return wall_now_ns(); }
  void sleep_until(std::int64_t deadline_ns, const std::atomic<bool>& running) override {
    constexpr std::int64_t kSlice = 50'000'000;
    while (running.load(std::memory_order_relaxed)) {
      const std::int64_t now = mono_now_ns();
      if (now >= deadline_ns) return;
      const std::int64_t until = std::min(deadline_ns, now + kSlice);
      timespec ts{static_cast<time_t>(until / 1'000'000'000),
                  static_cast<long>(until % 1'000'000'000)};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    }
  }
};

// The next deadline on the grid start + k·interval after `now`, and how many were skipped.
std::int64_t next_deadline(std::int64_t start, std::int64_t interval, std::int64_t now,
                           std::int64_t& tick, std::int64_t& missed) {
  std::int64_t next = start + (tick + 1) * interval;
  if (now > next) {
    // Late by at least one full period: skip to the grid point after now instead of bursting.
    const std::int64_t behind = (now - next) / interval + 1;
    missed += behind;
    tick += behind;
    next = start + (tick + 1) * interval;
  }
  ++tick;
  return next;
}

// The energy counter's next due time after a read at `at`. With a counter interval of its own:
// the first point of its grid (`due` plus whole intervals) after it, so that a late read does not
// shift the counter's cadence. Else (`relative`) the power cadence's next read is `every` after
// the last one, the main reads' included.
std::int64_t next_counter_due(std::int64_t at, std::int64_t due, std::int64_t every,
                              bool relative) {
  if (relative) return at + every;
  if (at < due) return due;
  return due + ((at - due) / every + 1) * every;
}

}  // namespace

SamplerClock& system_sampler_clock() {
  static SystemClock clock;
  return clock;
}

std::string describe_clock_events(std::uint64_t reasons) {
  return describe_clock_event_reasons(reasons);
}

Sampler::Sampler(GpuReaders readers, SamplerOptions options, SampleSink& sink,
                 std::vector<SlowTask> slow_tasks, SamplerClock& clock)
    : readers_(std::move(readers)),
      options_(options),
      sink_(sink),
      clock_(clock),
      last_reasons_(readers_.size()),
      reported_lost_(readers_.size(), false),
      slow_tasks_(std::move(slow_tasks)) {}

Sampler::~Sampler() {
  stop();
}

// One lane per physical GPU, in the order the readers came (a GPU's MIG devices join it).
void Sampler::make_lanes() {
  lanes_.clear();
  for (std::size_t k = 0; k < readers_.size(); ++k) {
    const unsigned gpu = readers_[k]->gpu();
    auto it = std::find_if(lanes_.begin(), lanes_.end(),
                           [gpu](const Lane& lane) { return lane.gpu == gpu; });
    if (it == lanes_.end()) {
      lanes_.emplace_back();
      it = std::prev(lanes_.end());
      it->gpu = gpu;
    }
    it->readers.push_back(k);
  }
}

void Sampler::start() {
  if (running_.exchange(true)) return;
  start_mono_ns_ = clock_.mono_ns();
  make_lanes();
  {
    std::lock_guard lock(stats_mutex_);
    stats_.lanes = static_cast<std::int64_t>(lanes_.size());
  }
  for (Lane& lane : lanes_) lane.thread = std::thread([this, &lane] { lane_loop(lane); });
  if (options_.health_interval.count() > 0) {
    std::vector<HealthReader> health;
    for (const auto& reader : readers_) {
      // A MIG device's health counters are its GPU's; an AMD GPU's are not read (docs/amd.md).
      if (reader->lost() || reader->is_mig()) continue;
      if (auto reader_of_health = reader->health_reader()) {
        health.push_back(std::move(*reader_of_health));
      }
    }
    health_.emplace(std::move(health), health_notes_);
  }
  slow_next_ns_.assign(slow_tasks_.size(), start_mono_ns_);
  if (health_ || !slow_tasks_.empty()) {
    health_thread_ = std::thread([this] { health_loop(); });
  }
}

void Sampler::stop() {
  if (!running_.exchange(false)) return;
  for (Lane& lane : lanes_) {
    if (lane.thread.joinable()) lane.thread.join();
  }
  if (health_thread_.joinable()) health_thread_.join();
  if (health_) {
    poll_health_events();
    read_health();
  }
  run_slow_tasks(true);  // the end of the last interval
}

SamplerStats Sampler::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

void Sampler::emit(Event event) {
  if (event.mono_ns == 0) {
    event.mono_ns = clock_.mono_ns();
    event.wall_ns = clock_.wall_ns();
  }
  sink_.on_event(event);
}

void Sampler::report_lost(std::size_t k) {
  reported_lost_[k] = true;
  emit({clock_.wall_ns(), clock_.mono_ns(), readers_[k]->index(), EventKind::GpuLost,
        fmt::format("GPU {} fell off the bus (GPU_IS_LOST); no more samples from it",
                    readers_[k]->index())});
}

void Sampler::check_clock_events(std::size_t k, const SampleRow& row) {
  const auto reasons = row.get(Metric::ClockEventReasons);
  if (!reasons) return;
  const auto bits = static_cast<std::uint64_t>(*reasons);
  // GPU idle flips with every pause; the events are about clocks held down under load.
  const std::uint64_t interesting = bits & ~nvml::kClocksEventGpuIdle;
  auto& last = last_reasons_[k];
  if (last && *last == interesting) return;
  if (last || interesting != 0) {
    emit({row.wall_ns, row.mono_ns, row.device_index, EventKind::ClockEvents,
          interesting == 0 ? "clocks no longer held down"
                           : "clocks held down by " + describe_clock_events(interesting)});
  }
  last = interesting;
}

// The power row a main read's row holds (power, instant power, the counter), if any.
std::optional<PowerRow> Sampler::power_row_of(const SampleRow& sample, unsigned index) {
  PowerRow row;
  row.mono_ns = sample.mono_ns;
  row.wall_ns = sample.wall_ns;
  row.device_index = index;
  row.power_w = sample.get(Metric::PowerW);
  if (const auto mj = sample.get(Metric::EnergyMj)) row.energy_mj = *mj;
  row.power_instant_w = sample.get(Metric::PowerInstantW);
  if (!row.power_w && !row.energy_mj && !row.power_instant_w) return std::nullopt;
  return row;
}

bool Sampler::sample_reader(std::size_t k, std::int64_t tick_mono_ns, SampleRow& row, Tally& tally,
                            bool counter) {
  GpuReader& reader = *readers_[k];
  if (reader.lost()) {
    if (!reported_lost_[k]) {
      report_lost(k);
      tally.lost.push_back(reader.index());
    }
    return false;
  }
  row = SampleRow{};
  row.mono_ns = clock_.mono_ns();
  row.wall_ns = clock_.wall_ns();
  const ReadOutcome outcome = reader.read(row, tick_mono_ns, counter);
  tally.failed += outcome.failed_calls;
  if (reader.lost() && !reported_lost_[k]) {
    report_lost(k);
    tally.lost.push_back(reader.index());
  }
  if (outcome.source_event) {
    emit({row.wall_ns, row.mono_ns, reader.index(), EventKind::MetricsSource,
          *outcome.source_event});
  }
  for (const auto& detail : outcome.mig_events) {
    emit({row.wall_ns, row.mono_ns, reader.index(), EventKind::MigInstance, detail});
  }
  if (outcome.counter_event) {
    emit({row.wall_ns, row.mono_ns, reader.index(), EventKind::CounterReset,
          *outcome.counter_event});
  }
  if (row.present.none()) return false;
  check_clock_events(k, row);
  sink_.on_sample(row);
  ++tally.rows;
  return true;
}

void Sampler::add_tally(const Tally& tally) {
  stats_.rows += tally.rows;
  stats_.failed_calls += tally.failed;
  stats_.lost_gpus += static_cast<std::int64_t>(tally.lost.size());
  stats_.lost_gpu_indices.insert(stats_.lost_gpu_indices.end(), tally.lost.begin(),
                                 tally.lost.end());
}

void Sampler::sample_lane(Lane& lane, std::int64_t tick_mono_ns, std::vector<SampleRow>& rows,
                          bool counter) {
  Tally tally;
  for (std::size_t j = 0; j < lane.readers.size(); ++j) {
    if (!sample_reader(lane.readers[j], tick_mono_ns, rows[j], tally, counter)) {
      rows[j] = SampleRow{};
    }
  }
  std::lock_guard lock(stats_mutex_);  // one lock a tick: the tally and the tick together
  add_tally(tally);
  ++lane.ticks;
  stats_.ticks = std::max(stats_.ticks, lane.ticks);
}

void Sampler::power_lane(const Lane& lane, const std::vector<SampleRow>* rows, bool counter) {
  std::int64_t produced = 0;
  for (std::size_t j = 0; j < lane.readers.size(); ++j) {
    GpuReader& reader = *readers_[lane.readers[j]];
    if (reader.lost() || reader.is_mig()) continue;  // a MIG device's power is its GPU's
    PowerRow row;
    if (rows != nullptr) {
      // The main read of this tick has just read power and the counter: no call again.
      const auto copied = power_row_of((*rows)[j], reader.index());
      if (!copied) continue;
      row = *copied;
    } else {
      row.mono_ns = clock_.mono_ns();
      row.wall_ns = clock_.wall_ns();
      const ReadOutcome outcome = reader.read_power(row, counter);  // a lost GPU: main says
      if (outcome.counter_event) {
        emit({row.wall_ns, row.mono_ns, reader.index(), EventKind::CounterReset,
              *outcome.counter_event});
      }
    }
    if (!row.power_w && !row.energy_mj && !row.power_instant_w) continue;
    sink_.on_power(row);
    ++produced;
  }
  std::lock_guard lock(stats_mutex_);
  stats_.power_rows += produced;
}

void Sampler::note_missed(const Lane& lane, std::int64_t missed, bool power) {
  {
    std::lock_guard lock(stats_mutex_);
    (power ? stats_.power_deadlines_missed : stats_.deadlines_missed) += missed;
  }
  if (!power && missed >= 2) {
    emit({clock_.wall_ns(), clock_.mono_ns(), lane.gpu, EventKind::Gap,
          fmt::format("sampling fell {} ticks behind (a slow driver or an overloaded host)",
                      missed)});
  }
}

// A GPU's two cadences on one thread, each on its own grid from the start: the main read when
// its tick is due, then the power read when its tick is due (from the main read's row when both
// fell due together), then a sleep to the nearer deadline.
void Sampler::lane_loop(Lane& lane) {
  const std::int64_t interval = options_.interval.count();
  const std::int64_t power_every = options_.power_interval.count();
  // With no counter interval the main read takes the counter at every tick.
  const bool every_main = options_.counter_interval.count() <= 0;
  const std::int64_t counter_every =
      every_main ? kPowerCounterInterval.count() : options_.counter_interval.count();
  std::int64_t main_tick = 0, power_tick = 0;
  std::int64_t main_due = start_mono_ns_;
  std::int64_t power_due = power_every > 0 ? start_mono_ns_ : INT64_MAX;
  std::int64_t counter_due = start_mono_ns_;  // the next counter read, on its grid from the start
  std::vector<SampleRow> rows(lane.readers.size());
  while (running_.load(std::memory_order_relaxed)) {
    const bool main_now = clock_.mono_ns() >= main_due;
    if (main_now) {
      const bool counter = every_main || main_due >= counter_due;
      sample_lane(lane, main_due, rows, counter);
      if (counter) counter_due = next_counter_due(main_due, counter_due, counter_every, every_main);
      std::int64_t missed = 0;
      main_due = next_deadline(start_mono_ns_, interval, clock_.mono_ns(), main_tick, missed);
      if (missed > 0) note_missed(lane, missed, false);
    }
    if (power_every > 0 && clock_.mono_ns() >= power_due) {
      const bool counter = !main_now && power_due >= counter_due;
      power_lane(lane, main_now ? &rows : nullptr, counter);
      if (counter)
        counter_due = next_counter_due(power_due, counter_due, counter_every, every_main);
      std::int64_t missed = 0;
      power_due = next_deadline(start_mono_ns_, power_every, clock_.mono_ns(), power_tick, missed);
      if (missed > 0) note_missed(lane, missed, true);
    }
    clock_.sleep_until(std::min(main_due, power_due), running_);
  }
  // The state at the job's end, so that the last interval is covered: each lane its own GPU's,
  // all at once (one after the other they would take 40 ms on 8 H200s). With a power cadence the
  // last power rows come from it, so that the counter's last reading ends the power rows as its
  // first starts them (the analysis compares the two over the same span).
  sample_lane(lane, clock_.mono_ns(), rows, true);
  if (power_every > 0) power_lane(lane, &rows, true);
}

}  // namespace gpuscope::collect

namespace gpuscope::collect {

void Sampler::poll_health_events() {
  for (auto& event : health_->poll_events()) emit(std::move(event));
}

void Sampler::read_health() {
  std::vector<HealthRow> rows;
  std::vector<Event> events;
  health_->read(rows, events);
  for (const auto& row : rows) sink_.on_health(row);
  for (auto& event : events) emit(std::move(event));
  std::lock_guard lock(stats_mutex_);
  stats_.health_rows += static_cast<std::int64_t>(rows.size());
}

// Its own thread, so that no health call (the violation fields take 1.4 ms on an H200) ever
// delays a sample: events are polled at the main cadence, counters read at the health one.
void Sampler::health_loop() {
  const std::int64_t interval = options_.interval.count();
  const std::int64_t health_every = options_.health_interval.count();
  std::int64_t tick = 0;
  std::int64_t missed = 0;
  std::int64_t next_read = start_mono_ns_;
  std::int64_t deadline = start_mono_ns_;
  while (running_.load(std::memory_order_relaxed)) {
    if (health_) poll_health_events();
    if (health_ && clock_.mono_ns() >= next_read) {
      read_health();
      next_read += health_every * ((clock_.mono_ns() - next_read) / health_every + 1);
    }
    run_slow_tasks(false);
    deadline = next_deadline(start_mono_ns_, interval, clock_.mono_ns(), tick, missed);
    clock_.sleep_until(deadline, running_);
  }
}

// Each slow task whose time has come (all of them when `all`), its next time on its own grid.
void Sampler::run_slow_tasks(bool all) {
  for (std::size_t k = 0; k < slow_tasks_.size(); ++k) {
    const auto& task = slow_tasks_[k];
    const std::int64_t now = clock_.mono_ns();
    if (!all && now < slow_next_ns_[k]) continue;
    if (task.run) task.run();
    const std::int64_t every = std::max<std::int64_t>(1, task.interval.count());
    slow_next_ns_[k] += every * ((now - slow_next_ns_[k]) / every + 1);
  }
}

}  // namespace gpuscope::collect
