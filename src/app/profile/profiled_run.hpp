// The one lifecycle of a sampled job, shared by `gpuscope profile` and by every trial of
// `gpuscope sweep`: probe the GPUs, create the run database, start the sampler, run the job with
// its output and events recorded, stop the sampler, and store how the run ended. What differs
// between the two (the live view, the progress line, kernel tracing; a sweep's measured window
// and energy readings) plugs in through the sink and the job callbacks.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/profile/node_watch.hpp"
#include "app/profile/run_sink.hpp"
#include "collect/backend.hpp"
#include "collect/gpu_reader.hpp"
#include "collect/node_gpus.hpp"
#include "collect/sampler.hpp"
#include "core/device_description.hpp"
#include "core/run.hpp"
#include "launch/job.hpp"
#include "phases/output_phases.hpp"
#include "store/run_writer.hpp"

namespace gpuscope::app {

struct ProfiledRunSetup {
  // The node's GPUs, whose vendors open the devices' readers and process lists
  // (collect/node_gpus.hpp); it outlives the run.
  const collect::NodeGpus* gpus = nullptr;
  collect::BackendOptions backend;         // the saturation source options among them
  std::vector<unsigned> indices;           // the GPUs to sample
  std::vector<DeviceDescription> devices;  // their descriptions, in the same order
  RunInfo info;                            // the run as stored (start times included)
  std::filesystem::path output;            // the run database
  bool force = false;                      // replace an existing regular file
  store::WriterOptions writer;
  collect::SamplerOptions sampler;
  bool verbose = false;  // -v: every sample on stderr
  // How often the processes on the GPUs are looked at (collect/process_watch.hpp); 0: never.
  std::chrono::milliseconds process_interval{1000};
  // Phases (docs/phases.md): marks received on a socket the job finds in GPUSCOPE_MARK_SOCKET,
  // and the job's output lines matched against these patterns (which need the output captured).
  bool marks = true;
  std::vector<phases::OutputPhasePattern> output_phases;
  // The node's CPU and memory energy (app/profile/node_watch.hpp), read on the sampler's slow
  // thread; nullopt: not read.
  std::optional<NodeWatchOptions> node;
};

class ProfiledRun {
 public:
  // Probes the GPUs and creates the run database; throws Error when it cannot be made.
  explicit ProfiledRun(ProfiledRunSetup setup);
  ~ProfiledRun();
  ProfiledRun(const ProfiledRun&) = delete;
  ProfiledRun& operator=(const ProfiledRun&) = delete;

  // What probing the GPUs found that the user should know (metric groups a GPU lacks).
  const std::vector<std::string>& notes() const { return notes_; }
  const ProfiledRunSetup& setup() const { return setup_; }
  store::RunWriter& writer() { return *writer_; }
  // The run's own sink: every row to the database, the latest power for the progress line.
  RunSink& sink() { return *sink_; }

  // Samples into `sink` (which must pass every row on to sink(), as a wrapping sink does) while
  // the job runs. Each output line is stored, then given to callbacks.on_output; each event goes
  // to `sink`, then to callbacks.on_event. `on_job_started` gets the job's start on the monotonic
  // clock. Returns how the job ended (NotStarted when it could not be spawned); never throws
  // for what the job does. Once only.
  launch::JobResult run(const launch::LaunchOptions& launch, collect::SampleSink& sink,
                        launch::JobCallbacks callbacks,
                        const std::function<void(std::int64_t)>& on_job_started = {});

  // How the run ended, from the job's result and the sampler's statistics (after run()), with
  // what did not pair up among the phases in its problems.
  RunEnd end(const launch::JobResult& result) const;
  // The phases stored (after run()).
  std::int64_t phases() const { return phases_; }
  // Stores `end` and closes the database; the storage problems are added to end.problems and
  // returned.
  std::vector<std::string> store_end(RunEnd& end);

 private:
  // Starts the job and waits for it, the processes on the GPUs watched meanwhile; NotStarted
  // when it cannot be spawned.
  launch::JobResult run_job(const launch::LaunchOptions& job_launch,
                            const launch::JobCallbacks& callbacks,
                            const std::function<void(std::int64_t)>& on_job_started);

  ProfiledRunSetup setup_;
  std::vector<std::string> notes_;
  collect::GpuReaders readers_;
  std::unique_ptr<store::RunWriter> writer_;
  std::unique_ptr<RunSink> sink_;
  std::unique_ptr<NodeWriterSink> node_sink_;
  std::unique_ptr<NodeWatch> node_;
  collect::SamplerStats stats_;
  std::vector<std::string> phase_problems_;
  std::int64_t phases_ = 0;
  bool ran_ = false;
};

}  // namespace gpuscope::app
