#include "app/profiled_run.hpp"

#include <optional>
#include <utility>

#include "app/process_watch.hpp"
#include "app/run_context.hpp"

namespace gpuscope::app {

ProfiledRun::ProfiledRun(ProfiledRunSetup setup) : setup_(std::move(setup)) {
  for (unsigned index : setup_.indices) {
    readers_.emplace_back(setup_.session->device(index), notes_);
  }
  writer_ = store::RunWriter::create(setup_.output, setup_.force, setup_.info, setup_.devices,
                                     setup_.writer);
  sink_ = std::make_unique<RunSink>(*writer_, setup_.devices.size(), setup_.verbose,
                                    setup_.info.start_mono_ns);
}

ProfiledRun::~ProfiledRun() = default;

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
  launch::JobResult result;
  if (auto job = launch::Job::start(launch)) {
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
  sampler.stop();
  stats_ = sampler.stats();
  return result;
}

RunEnd ProfiledRun::end(const launch::JobResult& result) const {
  return run_end(result, stats_);
}

std::vector<std::string> ProfiledRun::store_end(RunEnd& end) {
  std::vector<std::string> problems = writer_->finish(end);
  end.problems.insert(end.problems.end(), problems.begin(), problems.end());
  return problems;
}

}  // namespace gpuscope::app
