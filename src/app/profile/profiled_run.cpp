#include "app/profile/profiled_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <optional>
#include <utility>

#include "app/profile/run_context.hpp"
#include "collect/describe.hpp"
#include "collect/node_gpus.hpp"
#include "collect/process_watch.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "phases/mark_socket.hpp"
#include "phases/phase_tracker.hpp"

namespace gpuscope::app {

ProfiledRun::ProfiledRun(ProfiledRunSetup setup) : setup_(std::move(setup)) {
  // The saturation source of each GPU is chosen here, and stored with its description.
  collect::OpenedReaders opened = collect::open_node_readers(
      *setup_.gpus, setup_.indices, setup_.devices, setup_.backend, setup_.sampler.interval);
  readers_ = std::move(opened.readers);
  notes_ = std::move(opened.notes);
  // Before the run database: a wrong --sysfs-root leaves no file behind.
  if (setup_.node) node_ = std::make_unique<NodeWatch>(*setup_.node);
  writer_ = store::RunWriter::create(setup_.output, setup_.force, setup_.info, setup_.devices,
                                     setup_.writer);
  sink_ = std::make_unique<RunSink>(*writer_, setup_.devices.size(), setup_.verbose,
                                    setup_.info.start_mono_ns);
  if (node_) {
    node_sink_ = std::make_unique<NodeWriterSink>(*writer_);
    node_->attach(*node_sink_, *sink_);
  }
}

ProfiledRun::~ProfiledRun() = default;

namespace {

std::filesystem::path temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? std::filesystem::path(tmp) : "/tmp";
}

// A mark's time is the sender's CLOCK_MONOTONIC; one outside [the run's start, its arrival]
// (1 ms of slack either way) cannot be a time of that clock on this machine: its arrival is used.
std::int64_t mark_time(const phases::Mark& mark, std::int64_t run_start, std::int64_t arrival,
                       std::atomic<std::int64_t>& replaced) {
  constexpr std::int64_t kSlackNs = 1'000'000;
  if (mark.mono_ns >= run_start - kSlackNs && mark.mono_ns <= arrival + kSlackNs) {
    return std::min(mark.mono_ns, arrival);
  }
  ++replaced;
  return arrival;
}

// How many marks arrived, and how many of them had a time replaced by their arrival.
struct MarkCounts {
  std::atomic<std::int64_t> received{0};
  std::atomic<std::int64_t> retimed{0};
};

// Hands a mark's edge to the tracker as what the mark is: a begin, an end or an instant.
void track(phases::PhaseTracker& tracker, phases::MarkKind kind, const phases::PhaseEdge& edge) {
  switch (kind) {
    case phases::MarkKind::Begin:
      tracker.begin(edge);
      break;
    case phases::MarkKind::End:
      tracker.end(edge);
      break;
    case phases::MarkKind::Point:
      tracker.point(edge);
      break;
  }
}

// Opens the marks' socket, whose marks go to `tracker` (counted in `counts`), names it in the
// job's environment and starts receiving; when that fails, says so in `problems`. Returns the
// receiver as far as it got (null when it could not be made).
std::unique_ptr<phases::MarkReceiver> start_mark_receiver(phases::PhaseTracker& tracker,
                                                          std::int64_t run_start,
                                                          MarkCounts& counts,
                                                          launch::LaunchOptions& job_launch,
                                                          std::vector<std::string>& problems) {
  std::unique_ptr<phases::MarkReceiver> receiver;
  try {
    receiver = std::make_unique<phases::MarkReceiver>(
        temp_dir(), [&tracker, &counts, run_start](const phases::Mark& mark, std::int64_t arrival) {
          ++counts.received;
          const phases::PhaseEdge edge{
              PhaseSource::Mark, mark.name, mark.instance,
              mark.pid,          mark.tid,  mark_time(mark, run_start, arrival, counts.retimed)};
          track(tracker, mark.kind, edge);
        });
    job_launch.extra_env[phases::kMarkSocketVariable] = receiver->address();
    receiver->start();
  } catch (const Error& e) {
    // The job is not told of a socket nobody listens on.
    job_launch.extra_env.erase(phases::kMarkSocketVariable);
    receiver.reset();
    problems.push_back(fmt::format("marks were not received: {} ({})", e.summary(), e.reason()));
  }
  return receiver;
}

// Looks at the processes on the sampled GPUs every setup.process_interval while the job `job`
// runs, into the run database; `watch` stays empty when the interval is 0.
void start_process_watch(std::optional<collect::ProcessWatch>& watch, const ProfiledRunSetup& setup,
                         store::RunWriter& writer, pid_t job) {
  if (setup.process_interval.count() <= 0) return;
  std::vector<collect::WatchedDevice> devices =
      collect::watched_devices(*setup.gpus, setup.devices);
  collect::ProcessWatchOptions options;
  options.interval = setup.process_interval;
  watch.emplace(
      std::move(devices), options, [&writer](const GpuProcess& process) { writer.push(process); },
      [&writer](const ProcessSample& sample) { writer.push(sample); });
  watch->set_job({job, setup.info.slurm.job_id, setup.info.ranks.job_id});
  watch->start();
}

// The phases' problems once the job has ended: what did not pair up, lines on the marks'
// socket that were not marks, and marks whose time was replaced by their arrival.
std::vector<std::string> phase_problems(const phases::PhaseTracker& tracker,
                                        const phases::MarkReceiver* receiver,
                                        const MarkCounts& counts) {
  std::vector<std::string> problems = tracker.problems();
  if (receiver != nullptr && receiver->malformed() > 0) {
    problems.push_back(fmt::format(
        "{} line{} on the marks' socket {} not a mark (the last: {}); see docs/phases.md",
        receiver->malformed(), receiver->malformed() == 1 ? "" : "s",
        receiver->malformed() == 1 ? "was" : "were", receiver->last_malformed_reason()));
  }
  if (counts.retimed > 0) {
    problems.push_back(fmt::format(
        "{} of {} marks had a time that was not this machine's CLOCK_MONOTONIC during the run; "
        "their arrival time was used",
        counts.retimed.load(), counts.received.load()));
  }
  return problems;
}

}  // namespace

launch::JobResult ProfiledRun::run(const launch::LaunchOptions& launch, collect::SampleSink& sink,
                                   launch::JobCallbacks callbacks,
                                   const std::function<void(std::int64_t)>& on_job_started) {
  ran_ = true;
  std::vector<collect::SlowTask> slow_tasks;
  if (node_) slow_tasks.push_back(node_->task());
  collect::Sampler sampler(std::move(readers_), setup_.sampler, sink, std::move(slow_tasks));
  readers_.clear();
  sampler.start();
  for (const auto& note : sampler.health_notes()) fmt::print(stderr, "gpuscope: {}\n", note);
  // The caller's callbacks, each called after gpuscope's own (set below).
  auto user_output = std::move(callbacks.on_output);
  auto user_event = std::move(callbacks.on_event);
  // Phases: marks from the job, output lines matched against the --phase patterns.
  phases_ = 0;
  phases::PhaseTracker tracker([this](Phase phase) {
    ++phases_;
    writer_->push(std::move(phase));
  });
  phases::OutputPhaseMatcher matcher(setup_.output_phases, tracker);
  MarkCounts marks;
  std::unique_ptr<phases::MarkReceiver> receiver;
  launch::LaunchOptions job_launch = launch;
  phase_problems_.clear();
  if (setup_.marks) {
    receiver =
        start_mark_receiver(tracker, setup_.info.start_mono_ns, marks, job_launch, phase_problems_);
  }
  // Each output line is stored (and matched against the --phase patterns, when there are some)
  // before the caller sees it; each event goes to the sink first.
  if (matcher.empty()) {
    callbacks.on_output = [this, &user_output](const OutputLine& line) {
      writer_->push(line);
      if (user_output) user_output(line);
    };
  } else {
    callbacks.on_output = [this, &user_output, &matcher](const OutputLine& line) {
      writer_->push(line);
      matcher.on_line(line.text, line.mono_ns);
      if (user_output) user_output(line);
    };
  }
  callbacks.on_event = [&sink, &user_event](const Event& event) {
    sink.on_event(event);
    if (user_event) user_event(event);
  };
  launch::JobResult result = run_job(job_launch, callbacks, on_job_started);
  // Marks already sent are handed on; what is still open ends with the job.
  if (receiver) receiver->stop();
  const std::int64_t job_end =
      result.status == RunStatus::NotStarted ? mono_now_ns() : result.end_mono_ns;
  matcher.finish(job_end);
  tracker.finish(job_end);
  // After what starting the marks' receiver said, if anything.
  const auto after_job = phase_problems(tracker, receiver.get(), marks);
  phase_problems_.insert(phase_problems_.end(), after_job.begin(), after_job.end());
  sampler.stop();
  stats_ = sampler.stats();
  return result;
}

launch::JobResult ProfiledRun::run_job(const launch::LaunchOptions& job_launch,
                                       const launch::JobCallbacks& callbacks,
                                       const std::function<void(std::int64_t)>& on_job_started) {
  auto job = launch::Job::start(job_launch);
  if (!job) return launch::not_started(job.error());
  if (on_job_started) on_job_started(job->start_mono_ns());
  if (node_) node_->job_started(static_cast<unsigned>(job->pid()));
  std::optional<collect::ProcessWatch> watch;
  start_process_watch(watch, setup_, *writer_, job->pid());
  launch::JobResult result = job->wait(callbacks);
  if (watch) watch->stop();
  if (node_) node_->job_ended();
  return result;
}

RunEnd ProfiledRun::end(const launch::JobResult& result) const {
  RunEnd end = run_end(result, stats_);
  end.problems.insert(end.problems.end(), phase_problems_.begin(), phase_problems_.end());
  return end;
}

std::vector<std::string> ProfiledRun::store_end(RunEnd& end) {
  std::vector<std::string> problems = writer_->finish(end);
  end.problems.insert(end.problems.end(), problems.begin(), problems.end());
  return problems;
}

}  // namespace gpuscope::app
