#include "sim/amd_sim.hpp"

#include <unistd.h>

#include <cmath>

#include "amd/abi.hpp"
#include "sim/scenario_parser.hpp"

namespace gpuscope::sim {

AmdSim::AmdSim(const Clock& clock, bool rocm_smi) : clock_(clock), rocm_smi_(rocm_smi) {}

AmdResult AmdSim::fail(AmdResult result, std::string message) {
  last_error_ = std::move(message);
  return result;
}

const char* AmdSim::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_.c_str();
}

AmdResult AmdSim::init(const tl::expected<DriverOptions, std::string>& options) {
  std::lock_guard lock(mutex_);
  if (init_count_ > 0) {
    ++init_count_;
    return AmdResult::Ok;
  }
  if (!options) return fail(AmdResult::InitError, options.error());
  if (!options->scenario_path || ::access(options->scenario_path->c_str(), R_OK) != 0) {
    return fail(AmdResult::InitError,
                "GPUSCOPE_SIM_SCENARIO does not name a readable scenario file");
  }
  auto scenario = load_scenario(*options->scenario_path);
  if (!scenario) return fail(AmdResult::InitError, scenario.error());
  const char* library = rocm_smi_ ? "ROCm SMI" : "AMD SMI";
  if (!(rocm_smi_ ? scenario->amd.rocm_smi : scenario->amd.amd_smi)) {
    return fail(AmdResult::Load, std::string("the scenario has no ") + library + " (\"amd\")");
  }
  switch (scenario->amd.init_error) {
    case AmdInitError::None:
      break;
    case AmdInitError::Permission:
      return fail(AmdResult::NoPerm, "the scenario's amd.init_error: permission denied");
    case AmdInitError::DriverNotLoaded:
      return fail(AmdResult::DriverNotLoaded, "the scenario's amd.init_error: no amdgpu driver");
    case AmdInitError::InitError:
      return fail(AmdResult::InitError, "the scenario's amd.init_error: init_error");
  }
  epoch_ns_ = options->epoch_ns.value_or(clock_.realtime_ns());
  time_scale_ = options->time_scale.value_or(scenario->time_scale);
  privileged_ = options->privileged.value_or(scenario->privileged);
  models_.clear();
  for (std::size_t i = 0; i < scenario->amd_gpus.size(); ++i) {
    // Keyed apart from the NVIDIA GPUs' noise: an AMD device is never NVIDIA GPU i's twin.
    models_.push_back(
        std::make_unique<GpuModel>(scenario->amd_gpus[i].gpu, scenario->seed, 1000 + i));
    models_.back()->set_time_scale(time_scale_);
  }
  reset_energy_mj_.assign(models_.size(), std::nullopt);
  init_energy_mj_.clear();
  for (const auto& model : models_) init_energy_mj_.push_back(model->energy_mj());
  if (options->driver_costs) scenario->driver_costs = *driver_costs_named(*options->driver_costs);
  scenario_ = std::move(*scenario);
  if (auto rc = apply_state_file(*options); rc != AmdResult::Ok) return rc;
  init_count_ = 1;
  return AmdResult::Ok;
}

AmdResult AmdSim::apply_state_file(const DriverOptions& options) {
  StateFile state(options.state_path.value_or(
      scenario_->state_file.value_or(default_state_path(scenario_->name))));
  const tl::expected<StateMap, std::string> entries = state.read();
  if (!entries) return fail(AmdResult::InitError, entries.error());
  for (std::size_t i = 0; i < models_.size(); ++i) {
    const GpuConfig& gpu = scenario_->amd_gpus[i].gpu;
    const auto found = entries->find(gpu.uuid);
    if (found == entries->end()) continue;
    const unsigned mw = found->second.power_limit_mw;
    // A cap outside this scenario's range was set under another configuration of the UUID.
    if (mw < gpu.spec.power.min_w * 1000 || mw > gpu.spec.power.max_w * 1000) continue;
    models_[i]->set_power_limit(mw, scenario_ns(found->second.set_at_unix_ns));
  }
  state_ = std::move(state);
  return AmdResult::Ok;
}

AmdResult AmdSim::shutdown() {
  std::lock_guard lock(mutex_);
  if (init_count_ == 0) return fail(AmdResult::NotInit, "shut down without init");
  if (--init_count_ == 0) {
    models_.clear();
    scenario_.reset();
  }
  return AmdResult::Ok;
}

AmdResult AmdSim::count(std::uint32_t& count) {
  std::lock_guard lock(mutex_);
  if (init_count_ == 0) return fail(AmdResult::NotInit, "not initialised");
  count = static_cast<std::uint32_t>(models_.size());
  return AmdResult::Ok;
}

std::vector<unsigned> AmdSim::cards() {
  std::lock_guard lock(mutex_);
  std::vector<unsigned> cards;
  if (!scenario_) return cards;
  for (const AmdGpuConfig& device : scenario_->amd_gpus) cards.push_back(device.card);
  return cards;
}

const AmdGpuConfig* AmdSim::config(std::uint32_t index) {
  std::lock_guard lock(mutex_);
  if (!scenario_ || index >= scenario_->amd_gpus.size()) return nullptr;
  return &scenario_->amd_gpus[index];
}

std::int64_t AmdSim::scenario_ns(std::int64_t realtime_ns) const {
  if (realtime_ns <= epoch_ns_) return 0;
  return std::llround(static_cast<double>(realtime_ns - epoch_ns_) * time_scale_);
}

GpuModel* AmdSim::advanced(std::uint32_t index) {
  if (init_count_ == 0 || index >= models_.size()) return nullptr;
  models_[index]->advance_to(scenario_ns(clock_.realtime_ns()));
  return models_[index].get();
}

bool AmdSim::resetting(std::uint32_t index, const GpuModel& model) {
  const auto& reset_at = scenario_->amd_gpus[index].reset_at_s;
  if (!reset_at) return false;
  const double now_s = static_cast<double>(scenario_ns(clock_.realtime_ns())) / 1e9;
  if (now_s < *reset_at) return false;
  if (now_s < *reset_at + kAmdResetS) return true;
  if (!reset_energy_mj_[index]) reset_energy_mj_[index] = model.energy_mj();
  return false;
}

AmdResult AmdSim::read(std::uint32_t index, AmdReading& reading) {
  std::lock_guard lock(mutex_);
  GpuModel* model = advanced(index);
  if (model == nullptr) {
    return fail(init_count_ == 0 ? AmdResult::NotInit : AmdResult::Invalid, "no such device");
  }
  if (resetting(index, *model)) return fail(AmdResult::NotFound, "the GPU is being reset");
  const AmdGpuConfig& config = scenario_->amd_gpus[index];
  const Bucket& bucket = model->bucket();
  reading.gfx_activity =
      static_cast<unsigned>(std::lround(bucket.levels[index_of(Activity::Util)]));
  reading.umc_activity =
      static_cast<unsigned>(std::lround(bucket.levels[index_of(Activity::MemUtil)]));
  reading.average_power_uw = std::uint64_t{model->power_average_mw()} * 1000U;
  reading.average_power_w = static_cast<unsigned>(std::lround(model->power_average_mw() / 1000.0));
  // The accumulator: joules since the driver loaded (the model's uptime offset included) in
  // 15.3 µJ counts, wrapping at the counter's width.
  unsigned long long since_zero = model->energy_mj() - reset_energy_mj_[index].value_or(0);
  if (config.energy_counter_start_j && !reset_energy_mj_[index]) {
    since_zero = model->energy_mj() - init_energy_mj_[index] +
                 static_cast<unsigned long long>(*config.energy_counter_start_j * 1000.0);
  }
  const double counts = static_cast<double>(since_zero) * 1000.0 / amd::kEnergyResolutionUj;
  const unsigned bits = config.amd.energy_counter_bits;
  const auto whole = static_cast<std::uint64_t>(counts);
  reading.energy_count = bits >= 64 ? whole : whole & ((std::uint64_t{1} << bits) - 1U);
  // The GPU's own clock runs on the scenario's timeline (faster under a time scale).
  reading.timestamp_ns = static_cast<std::uint64_t>(epoch_ns_ + scenario_ns(clock_.realtime_ns()));
  reading.temperature_c = bucket.temperature_c;
  reading.edge_c = bucket.temperature_c - 8;
  reading.memory_c = bucket.temperature_c + config.gpu.spec.thermal.memory_offset_c;
  reading.gfx_clock_mhz = model->sm_clock_mhz();
  reading.memory_used_bytes = static_cast<std::uint64_t>(bucket.memory_used_mib * 1048576.0);
  const Levels integral = model->activity_integral();
  const unsigned links = std::max(1U, config.amd.xgmi_links);
  reading.xgmi_read_kb =
      static_cast<std::uint64_t>(integral[index_of(Activity::NvlinkRx)] * 1024.0 / links);
  reading.xgmi_write_kb =
      static_cast<std::uint64_t>(integral[index_of(Activity::NvlinkTx)] * 1024.0 / links);
  // The utilisation's integral (percent × s) as the engine's busy time.
  reading.gfx_busy_ns = static_cast<std::uint64_t>(integral[index_of(Activity::Util)] * 1e7);
  reading.power_capped = bucket.cap_bound;
  return AmdResult::Ok;
}

AmdResult AmdSim::power_cap_uw(std::uint32_t index, std::uint64_t& microwatts) {
  std::lock_guard lock(mutex_);
  GpuModel* model = advanced(index);
  if (model == nullptr) return fail(AmdResult::Invalid, "no such device");
  microwatts = std::uint64_t{model->power_limit_mw()} * 1000U;
  return AmdResult::Ok;
}

AmdResult AmdSim::set_power_cap_uw(std::uint32_t index, std::uint64_t microwatts) {
  std::lock_guard lock(mutex_);
  GpuModel* model = advanced(index);
  if (model == nullptr) return fail(AmdResult::Invalid, "no such device");
  if (!privileged_) return fail(AmdResult::NoPerm, "setting a power cap needs root");
  const PowerSpec& power = scenario_->amd_gpus[index].gpu.spec.power;
  const auto watts = static_cast<double>(microwatts) / 1e6;
  if (watts < power.min_w || watts > power.max_w) {
    return fail(AmdResult::OutOfBounds, "the cap lies outside the device's range");
  }
  const auto milliwatts = static_cast<unsigned>(microwatts / 1000U);
  model->set_power_limit(milliwatts, model->time_ns());
  // Kept for the next process, as the driver keeps it until reboot.
  if (state_) {
    StateEntry entry;
    entry.power_limit_mw = milliwatts;
    entry.set_at_unix_ns = clock_.realtime_ns();
    if (auto written = state_->update({{scenario_->amd_gpus[index].gpu.uuid, entry}}); !written) {
      return fail(AmdResult::Unknown, written.error());
    }
  }
  return AmdResult::Ok;
}

CallCost AmdSim::call_cost_of(std::string_view symbol) const {
  std::lock_guard lock(mutex_);
  if (!scenario_ || scenario_->driver_costs.call_ns.empty()) return {};
  return call_cost(scenario_->driver_costs, symbol);
}

}  // namespace gpuscope::sim
