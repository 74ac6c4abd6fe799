// Hand-made rows and identities for the export tests.
#pragma once

#include "core/run.hpp"
#include "exporter/gpu_identity.hpp"

namespace gpuscope::exporter::testing {

inline GpuIdentity gpu(unsigned index) {
  GpuIdentity id;
  id.index = index;
  id.uuid = "GPU-0000000" + std::to_string(index);
  id.name = "NVIDIA H100 80GB HBM3";
  id.pci_bus_id = "00000000:18:00.0";
  id.memory_total_bytes = 80ull << 30;
  id.power_limit_w = 700;
  return id;
}

inline SampleRow row(unsigned index, std::int64_t wall_ns, double power_w) {
  SampleRow r;
  r.device_index = index;
  r.wall_ns = wall_ns;
  r.mono_ns = wall_ns;
  r.set(Metric::PowerW, power_w);
  r.set(Metric::EnergyMj, 1'000'000 + static_cast<double>(wall_ns / 1'000'000));
  r.set(Metric::SmActivePct, 61);
  r.set(Metric::MemoryUsedBytes, 24.0 * (1ull << 30));
  r.set(Metric::ClockEventReasons, 0x4);
  return r;
}

}  // namespace gpuscope::exporter::testing
