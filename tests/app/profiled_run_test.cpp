// The one lifecycle of a sampled job (profile and every sweep trial), driven without the
// command line against the simulated driver: what it stores, in which order the hooks run, and
// how a job that cannot start ends.
#include "app/profile/profiled_run.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "collect/nvidia_gpus.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "launch/signals.hpp"
#include "load/loader.hpp"
#include "nvml/library.hpp"
#include "support/sql.hpp"
#include "unit/sim_env.hpp"

namespace gpuscope::app {
namespace {

using testing::SimEnvironment;

// Counts what passes through on its way to the run's own sink, as the live view and a sweep
// trial's sink do.
class CountingSink : public collect::SampleSink {
 public:
  explicit CountingSink(collect::SampleSink& inner) : inner_(inner) {}
  void on_sample(const SampleRow& row) override {
    inner_.on_sample(row);
    std::lock_guard lock(mutex_);
    ++samples;
  }
  void on_power(const PowerRow& row) override { inner_.on_power(row); }
  void on_event(const Event& event) override {
    inner_.on_event(event);
    std::lock_guard lock(mutex_);
    events.push_back(std::string(event.kind.text()));
  }
  std::mutex mutex_;
  int samples = 0;
  std::vector<std::string> events;

 private:
  collect::SampleSink& inner_;
};

struct Fixture {
  explicit Fixture(const std::string& scenario)
      : signals(), env(SimEnvironment::shipped(scenario)), gpus(nvidia_node()) {}

  // The node's simulated NVIDIA GPUs, as the readers' vendor.
  static collect::NodeGpus nvidia_node() {
    collect::NodeGpus node;
    node.vendors.push_back(std::make_unique<collect::NvidiaGpus>(
        nvml::Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true})));
    return node;
  }

  ProfiledRunSetup setup(std::vector<unsigned> indices) {
    ProfiledRunSetup s;
    s.gpus = &gpus;
    s.indices = indices;
    for (unsigned i : indices) {
      DeviceDescription d;
      d.index = i;
      s.devices.push_back(d);
    }
    s.info.command = {"test"};
    s.info.host = "node0";
    s.info.start_wall_ns = wall_now_ns();
    s.info.start_mono_ns = mono_now_ns();
    s.info.sampling_interval_ns = 20'000'000;
    s.output = db;
    s.sampler.interval = std::chrono::milliseconds(20);
    return s;
  }

  launch::SignalGuard signals;  // first, before the sampler starts a thread
  SimEnvironment env;
  collect::NodeGpus gpus;
  testing::TempDir dir;
  std::string db = dir.file("run.db");
};

TEST(ProfiledRun, StoresSamplesOutputAndTheEndOfTheJob) {
  Fixture f("h100x4-straggler");
  ProfiledRun run(f.setup({1, 3}));
  CountingSink sink(run.sink());
  launch::LaunchOptions launch;
  launch.argv = {"/bin/sh", "-c", "echo first; sleep 0.3; echo second >&2; exit 3"};
  launch.capture_output = true;
  launch::JobCallbacks callbacks;
  std::vector<std::string> lines;
  callbacks.on_output = [&](const OutputLine& line) { lines.push_back(line.text); };
  std::int64_t started = 0;
  const auto result = run.run(launch, sink, callbacks, [&](std::int64_t t) { started = t; });
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_GT(started, 0);
  EXPECT_EQ(lines, (std::vector<std::string>{"first", "second"}));
  EXPECT_GT(sink.samples, 4) << "two GPUs sampled at 50 Hz for 0.3 s";
  EXPECT_FALSE(sink.events.empty()) << "the job's start reaches the sink";

  RunEnd end = run.end(result);
  EXPECT_EQ(end.exit_code, 3);
  EXPECT_TRUE(run.store_end(end).empty());

  using testing::number;
  using testing::scalar;
  EXPECT_EQ(scalar(f.db, "SELECT status FROM runs"), "finished");
  EXPECT_EQ(number(f.db, "SELECT exit_code FROM runs"), 3);
  EXPECT_EQ(number(f.db, "SELECT count(*) FROM output"), 2);
  EXPECT_EQ(scalar(f.db, "SELECT line FROM output WHERE stream = 'stderr'"), "second");
  EXPECT_EQ(number(f.db, "SELECT count(DISTINCT device_index) FROM samples"), 2);
  EXPECT_EQ(number(f.db, "SELECT count(*) FROM samples WHERE device_index NOT IN (1, 3)"), 0);
  EXPECT_EQ(number(f.db, "SELECT count(*) FROM samples"), sink.samples);
}

// The marks' socket cannot be made (no such temporary folder): the run says so among its
// problems, and the job is not told of a socket nobody listens on.
TEST(ProfiledRun, MarksThatCannotBeReceivedAreSaid) {
  Fixture f("h100");
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", f.dir.file("no-such-folder").c_str(), 1);
  ProfiledRunSetup setup = f.setup({0});
  setup.marks = true;
  ProfiledRun run(setup);
  launch::LaunchOptions launch;
  launch.argv = {"/bin/sh", "-c", "echo \"socket=${GPUSCOPE_MARK_SOCKET:-none}\""};
  launch.capture_output = true;
  launch::JobCallbacks callbacks;
  std::vector<std::string> lines;
  callbacks.on_output = [&](const OutputLine& line) { lines.push_back(line.text); };
  const auto result = run.run(launch, run.sink(), callbacks, [](std::int64_t) {});
  old ? setenv("TMPDIR", saved.c_str(), 1) : unsetenv("TMPDIR");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(lines, (std::vector<std::string>{"socket=none"}));
  const RunEnd end = run.end(result);
  bool said = false;
  for (const auto& p : end.problems) said = said || p.find("marks were not received") == 0;
  EXPECT_TRUE(said) << "the problem is kept to the end of the run";
}

TEST(ProfiledRun, AJobThatCannotStartIsStoredAsNotStarted) {
  Fixture f("h100");
  ProfiledRun run(f.setup({0}));
  launch::LaunchOptions launch;
  launch.argv = {"/nonexistent/gpuscope-test-command"};
  bool started = false;
  const auto result = run.run(launch, run.sink(), {}, [&](std::int64_t) { started = true; });
  EXPECT_FALSE(started);
  EXPECT_EQ(result.status, RunStatus::NotStarted);
  EXPECT_EQ(result.exit_code, 127);
  RunEnd end = run.end(result);
  run.store_end(end);
  EXPECT_EQ(testing::scalar(f.db, "SELECT status FROM runs"), "not_started");
}

TEST(ProfiledRun, AnExistingFileIsKeptWithoutForce) {
  Fixture f("h100");
  { ProfiledRun first(f.setup({0})); }
  EXPECT_THROW(ProfiledRun second(f.setup({0})), Error);
  auto forced = f.setup({0});
  forced.force = true;
  EXPECT_NO_THROW(ProfiledRun third(std::move(forced)));
}

// The analysis loader driven without the command line, over the database ProfiledRun wrote.
TEST(AnalysisLoader, ReadsWhatAProfiledRunWrote) {
  Fixture f("h100x4-straggler");
  {
    ProfiledRun run(f.setup({0, 2}));
    launch::LaunchOptions launch;
    launch.argv = {"/bin/sh", "-c", "sleep 0.4"};
    const auto result = run.run(launch, run.sink(), {});
    RunEnd end = run.end(result);
    run.store_end(end);
  }
  load::AnalyzeOptions options;
  options.inputs = {f.db};
  options.trim = "none";
  const analyze::Analysis analysis = load::load_analysis(options);
  ASSERT_EQ(analysis.runs.size(), 1u);
  EXPECT_EQ(analysis.runs.front().status, "finished");
  ASSERT_EQ(analysis.gpus.size(), 2u);
  EXPECT_EQ(analysis.gpus[0].key.device_index, 0u);
  EXPECT_EQ(analysis.gpus[1].key.device_index, 2u);
  const auto samples = static_cast<std::size_t>(
      testing::number(f.db, "SELECT count(*) FROM samples WHERE device_index = 2"));
  EXPECT_EQ(analysis.gpus[1].samples, samples);
  EXPECT_TRUE(analysis.over_both[static_cast<std::size_t>(Metric::PowerW)]);
}

}  // namespace
}  // namespace gpuscope::app
