#include "app/profile/node_watch.hpp"

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "node/cpu_time.hpp"

namespace gpuscope::app {

void NodeWriterSink::on_node_domains(const std::vector<NodeEnergyDomain>& domains) {
  for (const auto& d : domains) writer_.push(d);
}

void NodeWriterSink::on_node_sample(const NodeEnergySample& sample) {
  writer_.push(sample);
}

void NodeWriterSink::on_node_cpu_time(const NodeCpuTime& time) {
  writer_.push(time);
}

NodeWatch::NodeWatch(NodeWatchOptions options) : options_(std::move(options)) {
  try {
    sampler_ = std::make_unique<node::NodeEnergySampler>(options_.sysfs_root);
  } catch (const Error& e) {
    throw Error::usage(e.summary(), e.reason(), "give --sysfs-root a sysfs tree, or leave it out");
  }
  if (options_.verbose) {
    for (const auto& note : sampler_->notes())
      fmt::print(stderr, "gpuscope: node energy: {}\n", note);
  }
}

void NodeWatch::attach(NodeReadingSink& readings, collect::SampleSink& events) {
  readings_ = &readings;
  events_ = &events;
  readings_->on_node_domains(sampler_->domains());
}

collect::SlowTask NodeWatch::task() {
  collect::SlowTask task;
  task.interval = options_.interval;
  if (!sampler_->domains().empty() && readings_ != nullptr) task.run = [this] { read(); };
  return task;
}

void NodeWatch::read() {
  std::lock_guard lock(mutex_);
  scratch_.clear();
  sampler_->read(scratch_);
  for (const auto& sample : scratch_) readings_->on_node_sample(sample);
  say_problems();
}

// Each problem once, as a run event; a refused counter (the node's CPU and DRAM energy lost
// for the whole run) also on stderr, with what to do.
void NodeWatch::say_problems() {
  for (const auto& problem : sampler_->take_problems()) {
    if (problem.kind == node::ProblemKind::PermissionDenied) {
      fmt::print(stderr, "gpuscope: {}\n", problem.message);
    }
    events_->on_event(
        {wall_now_ns(), mono_now_ns(), std::nullopt, EventKind::NodeEnergy, problem.message});
  }
}

void NodeWatch::job_started(unsigned pid) {
  if (readings_ == nullptr) return;
  cgroup_ = node::cgroup_of(pid, options_.proc_root);
  started_ = true;
  readings_->on_node_cpu_time(
      node::read_cpu_time(cgroup_, options_.sysfs_root, options_.proc_root));
}

void NodeWatch::job_ended() {
  if (!started_) return;
  readings_->on_node_cpu_time(
      node::read_cpu_time(cgroup_, options_.sysfs_root, options_.proc_root));
}

std::vector<collect::SlowTask> NodeEnergyLive::attach(collect::SampleSink& events) {
  if (!watch) return {};
  sink = std::make_unique<NodeSeriesSink>(*series);
  watch->attach(*sink, events);
  return {watch->task()};
}

NodeEnergyLive node_energy_live(bool wanted, const std::filesystem::path& sysfs_root,
                                const std::string& hostname) {
  NodeEnergyLive out;
  if (!wanted) return out;
  NodeWatchOptions options;
  options.sysfs_root = sysfs_root;
  out.watch = std::make_unique<NodeWatch>(options);
  if (out.watch->domains().empty()) {
    out.watch.reset();
    return out;
  }
  out.series = std::make_unique<exporter::NodeEnergySeries>(hostname);
  return out;
}

}  // namespace gpuscope::app
