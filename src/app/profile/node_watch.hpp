// The node's energy during a profiled run (docs/node-energy.md): the RAPL domains and
// Grace power meters found once when the run starts, read on the sampler's slow thread (never the
// GPUs' sampling one) into the run database, the job's cgroup CPU time and the node's at the job's
// start and end. A refused energy_uj is said once on stderr and as a run event, with what to do.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "collect/sampler.hpp"
#include "collect/sink.hpp"
#include "core/node_energy.hpp"
#include "exporter/node_energy_series.hpp"
#include "node/node_sampler.hpp"
#include "store/run_writer.hpp"

namespace gpuscope::app {

struct NodeWatchOptions {
  std::filesystem::path sysfs_root = "/sys";  // --sysfs-root (tests: a made-up tree)
  std::filesystem::path proc_root = "/proc";  // for /proc/stat and the job's cgroup
  std::chrono::milliseconds interval{1000};
  bool verbose = false;  // -v: what discovery found and left out, on stderr
};

// Where the node's readings go: the run database in profile, the exposition in serve.
class NodeReadingSink {
 public:
  virtual ~NodeReadingSink() = default;
  virtual void on_node_domains(const std::vector<NodeEnergyDomain>& domains) = 0;
  virtual void on_node_sample(const NodeEnergySample& sample) = 0;
  virtual void on_node_cpu_time(const NodeCpuTime& time) { (void)time; }
};

// A NodeReadingSink into a run database.
class NodeWriterSink : public NodeReadingSink {
 public:
  explicit NodeWriterSink(store::RunWriter& writer) : writer_(writer) {}
  void on_node_domains(const std::vector<NodeEnergyDomain>& domains) override;
  void on_node_sample(const NodeEnergySample& sample) override;
  void on_node_cpu_time(const NodeCpuTime& time) override;

 private:
  store::RunWriter& writer_;
};

class NodeWatch {
 public:
  // Discovers the domains; throws Error::usage for a --sysfs-root that is not a folder.
  explicit NodeWatch(NodeWatchOptions options);
  // Hands the domains to `readings`, where every reading goes from now on; problems become
  // events in `events`. Before task() runs.
  void attach(NodeReadingSink& readings, collect::SampleSink& events);

  // The sampler's slow task that reads every domain; empty run when there is nothing to read.
  collect::SlowTask task();
  // Reads every domain now (what task() runs).
  void read();
  // The job started as `pid` / ended: the CPU times of its cgroup and of the node.
  void job_started(unsigned pid);
  void job_ended();

  const std::vector<NodeEnergyDomain>& domains() const { return sampler_->domains(); }

 private:
  void say_problems();

  NodeWatchOptions options_;
  NodeReadingSink* readings_ = nullptr;
  collect::SampleSink* events_ = nullptr;
  std::unique_ptr<node::NodeEnergySampler> sampler_;
  std::mutex mutex_;  // read() from the slow thread and the final read at stop
  std::vector<NodeEnergySample> scratch_;
  std::optional<std::string> cgroup_;
  bool started_ = false;
};

// The node's readings into live series (serve's /metrics, monitor's power line).
class NodeSeriesSink : public NodeReadingSink {
 public:
  explicit NodeSeriesSink(exporter::NodeEnergySeries& series) : series_(series) {}
  void on_node_domains(const std::vector<NodeEnergyDomain>& domains) override {
    series_.set_domains(domains);
  }
  void on_node_sample(const NodeEnergySample& sample) override { series_.add(sample); }

 private:
  exporter::NodeEnergySeries& series_;
};

// The node's own energy live (serve, monitor): its domains found at start, read on the sampler's
// slow thread into `series`; all empty where the node has none or it is not wanted.
struct NodeEnergyLive {
  std::unique_ptr<NodeWatch> watch;
  std::unique_ptr<exporter::NodeEnergySeries> series;
  std::unique_ptr<NodeSeriesSink> sink;

  // The sampler's slow task reading the domains (none without), problems as `events`.
  std::vector<collect::SlowTask> attach(collect::SampleSink& events);
};

// `wanted` false (--no-node-energy): nothing. Throws Error::usage for a bad `sysfs_root`.
NodeEnergyLive node_energy_live(bool wanted, const std::filesystem::path& sysfs_root,
                                const std::string& hostname);

}  // namespace gpuscope::app
