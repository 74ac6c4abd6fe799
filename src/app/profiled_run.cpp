#include "app/profiled_run.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <utility>

#include "app/process_watch.hpp"
#include "app/run_context.hpp"
#include "collect/saturation.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "phases/mark_socket.hpp"
#include "phases/phase_tracker.hpp"

namespace gpuscope::app {

ProfiledRun::ProfiledRun(ProfiledRunSetup setup) : setup_(std::move(setup)) {
  // The saturation source of each GPU is chosen here, and stored with its description.
  collect::OpenedReaders opened = collect::open_readers(
      *setup_.session, setup_.indices, setup_.devices, setup_.backend, setup_.sampler.interval);
  readers_ = std::move(opened.readers);
  notes_ = std::move(opened.notes);
  writer_ = store::RunWriter::create(setup_.output, setup_.force, setup_.info, setup_.devices,
                                     setup_.writer);
  sink_ = std::make_unique<RunSink>(*writer_, setup_.devices.size(), setup_.verbose,
                                    setup_.info.start_mono_ns);
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

}  // namespace

launch::JobResult ProfiledRun::run(const launch::LaunchOptions& launch, collect::SampleSink& sink,
                                   launch::JobCallbacks callbacks,
                                   const std::function<void(std::int64_t)>& on_job_started) {
  ran_ = true;
  collect::Sampler sampler(std::move(readers_), setup_.sampler, sink);
  readers_.clear();
  sampler.start();
  auto user_output = std::move(callbacks.on_output);
  auto user_event = std::move(callbacks.on_event);
  callbacks.on_output = [this, &user_output](const OutputLine& line) {
    writer_->push(line);
    if (user_output) user_output(line);
  };
  callbacks.on_event = [&sink, &user_event](const Event& event) {
    sink.on_event(event);
    if (user_event) user_event(event);
  };
  // Phases: marks from the job, output lines matched against the --phase patterns.
  phases_ = 0;
  phases::PhaseTracker tracker([this](Phase phase) {
    ++phases_;
    writer_->push(std::move(phase));
  });
  phases::OutputPhaseMatcher matcher(setup_.output_phases, tracker);
  std::atomic<std::int64_t> marks_received{0};
  std::atomic<std::int64_t> marks_retimed{0};
  std::unique_ptr<phases::MarkReceiver> receiver;
  launch::LaunchOptions job_launch = launch;
  if (setup_.marks) {
    const std::int64_t run_start = setup_.info.start_mono_ns;
    try {
      receiver = std::make_unique<phases::MarkReceiver>(
          temp_dir(), [&, run_start](const phases::Mark& mark, std::int64_t arrival) {
            ++marks_received;
            const phases::PhaseEdge edge{
                PhaseSource::Mark, mark.name, mark.instance,
                mark.pid,          mark.tid,  mark_time(mark, run_start, arrival, marks_retimed)};
            switch (mark.kind) {
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
          });
      job_launch.extra_env[phases::kMarkSocketVariable] = receiver->address();
      receiver->start();
    } catch (const Error& e) {
      phase_problems_.push_back(
          fmt::format("marks were not received: {} ({})", e.summary(), e.reason()));
    }
  }
  if (!matcher.empty()) {
    callbacks.on_output = [this, &user_output, &matcher](const OutputLine& line) {
      writer_->push(line);
      matcher.on_line(line.text, line.mono_ns);
      if (user_output) user_output(line);
    };
  }
  launch::JobResult result;
  if (auto job = launch::Job::start(job_launch)) {
    if (on_job_started) on_job_started(job->start_mono_ns());
    std::optional<ProcessWatch> watch;
    if (setup_.process_interval.count() > 0) {
      std::vector<nvml::Device> devices;
      for (unsigned index : setup_.indices) {
        if (auto device = setup_.session->try_device(index)) devices.push_back(*device);
      }
      ProcessWatchOptions options;
      options.interval = setup_.process_interval;
      watch.emplace(
          std::move(devices), options,
          [this](const GpuProcess& process) { writer_->push(process); },
          [this](const ProcessSample& sample) { writer_->push(sample); });
      watch->set_job({job->pid(), setup_.info.slurm.job_id, setup_.info.ranks.job_id});
      watch->start();
    }
    result = job->wait(callbacks);
    if (watch) watch->stop();
  } else {
    result = launch::not_started(job.error());
  }
  // Marks already sent are handed on; what is still open ends with the job.
  if (receiver) receiver->stop();
  const std::int64_t job_end =
      result.status == RunStatus::NotStarted ? mono_now_ns() : result.end_mono_ns;
  matcher.finish(job_end);
  tracker.finish(job_end);
  phase_problems_ = tracker.problems();
  if (receiver && receiver->malformed() > 0) {
    phase_problems_.push_back(fmt::format(
        "{} line{} on the marks' socket {} not a mark (the last: {}); see docs/phases.md",
        receiver->malformed(), receiver->malformed() == 1 ? "" : "s",
        receiver->malformed() == 1 ? "was" : "were", receiver->last_malformed_reason()));
  }
  if (marks_retimed > 0) {
    phase_problems_.push_back(fmt::format(
        "{} of {} marks had a time that was not this machine's CLOCK_MONOTONIC during the run; "
        "their arrival time was used",
        marks_retimed.load(), marks_received.load()));
  }
  sampler.stop();
  stats_ = sampler.stats();
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
