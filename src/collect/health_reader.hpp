// Reads one GPU's health counters (core/health.hpp): ECC, remapped rows, retired pages, PCIe
// replays, the video engines, violation times and NVLink errors. Like DeviceReader it probes
// every call once and skips from then on what the GPU does not support, so those values stay
// absent, never 0. The sampler calls it at the slow health cadence (collect/sampler.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/health.hpp"
#include "nvml/device.hpp"

namespace gpuscope::collect {

class HealthReader {
 public:
  explicit HealthReader(nvml::Device device);

  unsigned index() const { return device_.index(); }
  const nvml::Device& device() const { return device_; }
  // Whether the GPU answered any health call at all when probed.
  bool any() const;
  bool lost() const { return lost_; }

  // Reads every supported counter into `row` (index and times set by the caller). Returns false
  // when the GPU fell off the bus; a transient failure leaves that value absent.
  bool read(HealthRow& row);

 private:
  struct FieldSlot {
    unsigned field_id;
    unsigned scope;
    HealthMetric metric;
  };
  void probe();
  void probe_fields();
  void read_ecc(HealthRow& row);
  void read_calls(HealthRow& row);
  void read_fields(HealthRow& row);
  // Keeps a value, or remembers a lost GPU; other failures leave it absent.
  template <typename T>
  bool take(const nvml::Expected<T>& result);

  nvml::Device device_;
  bool lost_ = false;
  bool ecc_mode_ = false, ecc_counts_ = false, remapped_rows_ = false, pcie_replays_ = false;
  bool encoder_ = false, decoder_ = false;
  std::vector<FieldSlot> slots_;
  std::vector<nvmlFieldValue_t> fields_;
};

}  // namespace gpuscope::collect
