// A monitor of the GPUs this process may use (docs/c-api.md): their library opened through the
// one GPU interface (collect/node_gpus.hpp), the GPUs chosen as gpuscope profile chooses them
// for a job, a sampling thread per GPU feeding a WindowMeter. Under gpuscope profile each window
// is also sent as a begin and an end mark (docs/phases.md, "Marks"), so that the run database
// has it as a phase.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "capi/window_meter.hpp"
#include "collect/node_gpus.hpp"
#include "collect/sampler.hpp"
#include "core/error.hpp"

namespace gpuscope::capi {

struct MonitorOptions {
  double sampling_ms = 100;
  double energy_counter_ms = 0;  // 0: at every sample
  std::string gpus;              // empty: the GPUs this process may use
  bool marks = true;
  bool settle = false;  // window ends wait for each GPU's next sample (window_meter.hpp)
  collect::BackendOptions backend;  // the libraries: from the environment, as gpuscope's
};

// Why a monitor could not open: no GPU here (or no driver), or a wrong option.
class MonitorError : public Error {
 public:
  enum class Kind { NoGpu, InvalidArgument };
  MonitorError(Kind kind, std::string what, std::string why = {}, std::string hint = {})
      : Error(std::move(what), std::move(why), std::move(hint)), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

class Monitor {
 public:
  // Throws MonitorError.
  explicit Monitor(const MonitorOptions& options);
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // The window's id; 0 when WindowMeter::kMaxOpen windows are open already.
  std::uint64_t begin(std::string_view name);
  bool end(std::uint64_t id, WindowFigures& out, EndFailure& failure);
  std::size_t open_windows() const { return meter_->open_windows(); }
  std::size_t gpu_count() const { return meter_->gpu_count(); }
  // The process that opened it: a fork's child must open its own.
  pid_t owner() const { return owner_; }
  // What the user should know about the GPUs chosen (one line each).
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  void send_mark(bool begin, std::string_view name, std::int64_t mono_ns);

  collect::NodeGpus node_;
  std::vector<DeviceDescription> devices_;
  std::unique_ptr<WindowMeter> meter_;
  std::unique_ptr<collect::Sampler> sampler_;
  std::vector<std::string> notes_;
  std::string mark_socket_;  // empty: not under gpuscope profile, or marks not wanted
  bool settle_ = false;
  pid_t owner_ = 0;
};

}  // namespace gpuscope::capi
