// Reads one GPU's metrics. Every NVML call is probed once at construction; calls the GPU does not
// support are skipped from then on (their metrics stay absent, never 0), so a sample costs only
// the calls that can answer.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collect/dcgm_feed.hpp"
#include "collect/gpu_reader.hpp"
#include "core/run.hpp"
#include "nvml/gpm.hpp"

namespace gpuscope::collect {

// A MIG device to read (docs/mig.md): its GPU instance on its parent GPU, and its row index.
struct MigReading {
  nvml::Device parent;
  unsigned row_index = 0;
  unsigned gpu_instance_id = 0;
  std::string label;  // "GPU 0 GI 1 (4g.40gb)"
};

// Where a reader takes the saturation metrics from (collect/saturation.hpp decides).
struct SaturationReading {
  bool gpm = true;                 // probe and read GPM
  std::shared_ptr<DcgmFeed> dcgm;  // read DCGM's watch of this GPU (started by the feed)
};

class DeviceReader final : public GpuReader {
 public:
  // Probes `device`. `notes` receives one line per metric group the GPU does not offer.
  DeviceReader(nvml::Device device, std::vector<std::string>& notes,
               SaturationReading saturation = {});
  // A MIG device (`device` is its handle): only its memory and its GPU instance's saturation
  // metrics, from GPM (saturation.gpm) or from DCGM's watch of its GPU-instance entity
  // (saturation.dcgm, started by the feed); power, temperature and clocks are its parent's.
  // `notes` receives at most one line. Once the instance is gone (destroyed: INVALID_ARGUMENT or
  // NOT_FOUND), one read says so in mig_events and it is read no more.
  DeviceReader(nvml::Device device, MigReading mig, std::vector<std::string>& notes,
               SaturationReading saturation);
  DeviceReader(DeviceReader&&) noexcept = default;
  DeviceReader& operator=(DeviceReader&&) noexcept = default;

  // The row index: a GPU's NVML index, or a MIG device's row index (core/mig.hpp).
  unsigned index() const override { return mig_ ? mig_->row_index : device_.index(); }
  const nvml::Device& device() const { return device_; }
  bool lost() const override { return lost_.value.load(std::memory_order_relaxed); }
  bool has_gpm() const { return gpm_.has_value(); }
  // A MIG device's reader: no power cadence, no health (they are its parent's).
  bool is_mig() const override { return mig_.has_value(); }
  unsigned gpu() const override { return mig_ ? mig_->parent.index() : device_.index(); }
  std::unique_ptr<HealthReader> health_reader() const override;
  // The MIG device is gone; nothing more is read from it.
  bool gone() const { return gone_; }

  // Reads every supported metric into `row` (which the caller has reset). GPM metrics are filled
  // when at least 100 ms have passed since the previous GPM sample, else left absent.
  ReadOutcome read(SampleRow& row, std::int64_t mono_ns, bool counter) override;

  // The fast cadence: board power, instant power, and the energy counter when `counter`. Safe to
  // call from another thread concurrently with read(): it touches no state read() uses but the
  // lost flag.
  ReadOutcome read_power(PowerRow& row, bool counter) override;

 private:
  struct Gpm {
    nvml::GpmSample previous;
    nvml::GpmSample next;
    nvml::GpmQuery query;
    std::int64_t previous_mono_ns = 0;
  };
  struct FieldSlot {
    unsigned field_id;
    unsigned scope;
    Metric metric;
  };

  void probe(std::vector<std::string>& notes, bool gpm);
  void probe_mig(std::vector<std::string>& notes, bool gpm);
  // GPM: the two samples and the query, first sample taken; a failure's words when it cannot.
  std::optional<std::string> open_gpm();
  nvml::Status take_gpm(nvml::GpmSample& sample) const;
  ReadOutcome read_mig(SampleRow& row, std::int64_t mono_ns);
  void read_memory(SampleRow& row, ReadOutcome& outcome);
  void probe_mig_mode();
  // On a GPU's reader, about once a second: MIG mode against the start, instances that appeared.
  void check_mig(std::int64_t mono_ns, ReadOutcome& outcome);
  void probe_fields(std::vector<std::string>& notes);
  void probe_gpm(std::vector<std::string>& notes);
  void read_fields(SampleRow& row, ReadOutcome& outcome);
  void read_gpm(SampleRow& row, std::int64_t mono_ns, ReadOutcome& outcome);
  // Records a failure: lost GPUs are remembered; other codes count as transient.
  void note_failure(const nvml::Failure& failure, ReadOutcome& outcome);

  // Set by whichever cadence first sees GPU_IS_LOST; movable so readers can live in a vector.
  struct LostFlag {
    std::atomic<bool> value{false};
    LostFlag() = default;
    LostFlag(LostFlag&& other) noexcept : value(other.value.load()) {}
    LostFlag& operator=(LostFlag&& other) noexcept {
      value = other.value.load();
      return *this;
    }
  };

  nvml::Device device_;
  LostFlag lost_;
  bool power_instant_field_ = false;
  // One flag per NVML call, set by probing.
  bool power_usage_ = false, energy_ = false, power_limit_ = false, utilization_ = false;
  bool sm_clock_ = false, mem_clock_ = false, graphics_clock_ = false, temperature_ = false;
  bool memory_ = false, reasons_ = false;
  std::vector<FieldSlot> field_slots_;
  std::vector<nvmlFieldValue_t> fields_;
  std::optional<Gpm> gpm_;
  std::shared_ptr<DcgmFeed> dcgm_;
  std::vector<Metric> gpm_metrics_;
  std::vector<double> gpm_scale_;
  std::vector<std::optional<double>> gpm_values_;
  // A MIG device's reader: who it is, and whether it is gone.
  std::optional<MigReading> mig_;
  bool gone_ = false;
  // A GPU's reader: MIG mode at the start (nullopt: the GPU cannot do MIG), the GPU instances
  // present then and those reported since, and when MIG was last looked at.
  std::optional<bool> mig_mode_at_start_;
  bool mig_mode_reported_ = false;
  std::vector<unsigned> known_instances_;
  std::int64_t mig_checked_ns_ = 0;
};

}  // namespace gpuscope::collect
