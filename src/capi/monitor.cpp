#include "capi/monitor.hpp"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>

#include "collect/gpu_selection.hpp"
#include "phases/mark_protocol.hpp"
#include "phases/mark_socket.hpp"
#include "ranks/rank_context.hpp"

namespace gpuscope::capi {
namespace {

using Kind = MonitorError::Kind;

constexpr double kMinSamplingMs = 10;
constexpr double kMaxMs = 3'600'000;

void check_options(const MonitorOptions& o) {
  if (!(o.sampling_ms >= kMinSamplingMs && o.sampling_ms <= kMaxMs)) {
    throw MonitorError(Kind::InvalidArgument,
                       fmt::format("sampling_ms {} is outside 10 to 3600000", o.sampling_ms), {},
                       "use 0 for the default of 100 ms");
  }
  if (!(o.energy_counter_ms == 0 ||
        (o.energy_counter_ms >= o.sampling_ms && o.energy_counter_ms <= kMaxMs))) {
    throw MonitorError(Kind::InvalidArgument,
                       fmt::format("energy_counter_ms {} is neither 0 nor between sampling_ms "
                                   "({}) and 3600000",
                                   o.energy_counter_ms, o.sampling_ms),
                       "the counter is read with a sample", "use 0 to read it at every sample");
  }
}

// Ranks of torchrun or mpirun on one node, each using the GPU of its local rank, measure that
// GPU alone: the node is counted once, not once per rank (SLURM binds GPUs to its tasks itself).
void one_gpu_per_rank(collect::GpuSelection& selection, const RankContext& ranks) {
  if (!ranks.active() || ranks.launcher == "slurm" || !ranks.local_rank ||
      !ranks.local_world_size) {
    return;
  }
  const auto local_ranks = static_cast<std::size_t>(*ranks.local_world_size);
  const auto gpus = selection.indices.size();
  if (!selection.keep_local_rank_gpu(static_cast<std::size_t>(*ranks.local_rank), local_ranks) &&
      local_ranks > 1 && gpus > 1) {
    selection.notes.push_back(fmt::format(
        "{} ranks on this node each measure all {} GPUs: the node's energy is counted once per "
        "rank; give each rank its GPUs (CUDA_VISIBLE_DEVICES or options.gpus)",
        local_ranks, gpus));
  }
}

// The GPUs a program may use, as gpuscope profile chooses them for a job: the list given, else
// ROCm's variables on a node with AMD GPUs, CUDA_VISIBLE_DEVICES and the schedulers' on NVIDIA's,
// else all.
collect::GpuSelection choose_gpus(const std::string& gpus, const collect::NodeGpus& node) {
  const auto& devices = node.system.devices;
  const collect::MigResolver mig = collect::mig_resolver(node);
  if (!gpus.empty()) return collect::select_gpus(gpus, devices, mig);
  const auto env = ranks::process_environment();
  collect::GpuSelection selection;
  if (auto amd = collect::amd_visible(env, devices)) {
    selection = *std::move(amd);
  } else if (auto visible = ranks::visible_gpus(env)) {
    selection = collect::select_visible_gpus(visible->list, visible->source, devices, mig);
  } else {
    selection = collect::select_gpus("all", devices, mig);
  }
  one_gpu_per_rank(selection, ranks::read_rank_context(env));
  return selection;
}

collect::NodeGpus open_gpus(const collect::BackendOptions& backend) {
  try {
    return collect::open_node_gpus(backend);
  } catch (const Error& e) {
    throw MonitorError(Kind::NoGpu, e.summary(), e.reason(), e.hint());
  }
}

std::chrono::nanoseconds to_ns(double ms) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double, std::milli>(ms));
}

}  // namespace

Monitor::Monitor(const MonitorOptions& options) : owner_(getpid()) {
  check_options(options);
  node_ = open_gpus(options.backend);
  collect::GpuSelection selection;
  try {
    selection = choose_gpus(options.gpus, node_);
  } catch (const Error& e) {
    throw MonitorError(Kind::InvalidArgument, e.summary(), e.reason(), e.hint());
  }
  notes_ = node_.notes;
  notes_.insert(notes_.end(), selection.notes.begin(), selection.notes.end());
  if (selection.indices.empty()) {
    throw MonitorError(Kind::NoGpu, "no GPU this process may use",
                       selection.notes.empty() ? "the node lists none" : selection.notes.front(),
                       "check CUDA_VISIBLE_DEVICES (or ROCR_VISIBLE_DEVICES) and gpuscope devices");
  }
  std::vector<MeteredGpu> metered;
  for (unsigned row : selection.rows()) {
    devices_.push_back(collect::device_at(node_.system.devices, row));
    metered.push_back({row, devices_.back().uuid.value_or("")});
  }
  const auto interval = to_ns(options.sampling_ms);
  collect::OpenedReaders opened;
  try {
    opened =
        collect::open_node_readers(node_, selection.rows(), devices_, options.backend, interval);
  } catch (const Error& e) {  // a GPU that cannot be opened (lost, no permission)
    throw MonitorError(Kind::NoGpu, e.summary(), e.reason(), e.hint());
  }
  notes_.insert(notes_.end(), opened.notes.begin(), opened.notes.end());
  meter_ = std::make_unique<WindowMeter>(std::move(metered),
                                         2 * interval + std::chrono::milliseconds(50));
  settle_ = options.settle;
  collect::SamplerOptions sampling{interval, {}, {}, to_ns(options.energy_counter_ms)};
  sampler_ = std::make_unique<collect::Sampler>(std::move(opened.readers), sampling, *meter_);
  sampler_->start();
  if (options.marks) {
    const char* socket = std::getenv(phases::kMarkSocketVariable);
    if (socket != nullptr) mark_socket_ = socket;
  }
}

Monitor::~Monitor() {
  if (sampler_ && getpid() == owner_) sampler_->stop();  // a fork's child has no threads to stop
}

void Monitor::send_mark(bool begin, std::string_view name, std::int64_t mono_ns) {
  phases::Mark mark;
  mark.kind = begin ? phases::MarkKind::Begin : phases::MarkKind::End;
  mark.mono_ns = mono_ns;
  mark.pid = getpid();
  mark.tid = static_cast<std::int64_t>(syscall(SYS_gettid));
  mark.name = phases::clean_name(name);
  // Not delivered (the profiler ended, its queue full): the window is measured all the same.
  (void)phases::send_mark(mark_socket_, mark);
}

std::uint64_t Monitor::begin(std::string_view name) {
  std::int64_t now = 0;
  const std::uint64_t id = meter_->begin(std::string(name), WindowMeter::kNow, &now);
  if (id != 0 && !mark_socket_.empty()) send_mark(true, name, now);
  return id;
}

bool Monitor::end(std::uint64_t id, WindowFigures& out, EndFailure& failure) {
  if (!meter_->end(id, WindowMeter::kNow, out, failure, settle_)) return false;
  if (!mark_socket_.empty()) send_mark(false, out.name, out.end_ns);
  return true;
}

}  // namespace gpuscope::capi
