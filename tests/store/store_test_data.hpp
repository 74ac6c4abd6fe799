// Runs, devices and rows with recognisable values for the store tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/device_description.hpp"
#include "core/run.hpp"

namespace gpuscope::store::testing {

// A run started at a fixed time; SLURM context set when rank >= 0.
inline RunInfo make_run(int rank = -1, std::string host = "node1") {
  RunInfo run;
  run.command = {"python", "train.py", "--lr", "3e-4", "it's"};
  run.label = "baseline";
  run.host = std::move(host);
  run.user = "alice";
  run.start_wall_ns = 1'714'566'896'123'456'789;
  run.start_mono_ns = 5'000'000'000;
  run.tool_version = "0.1.0";
  run.sampling_interval_ns = 500'000'000;
  run.power_sampling_interval_ns = 50'000'000;
  run.scenario = "h100x4-straggler";
  run.driver_version = "550.54.15";
  run.cuda_visible_devices = "0,1";
  if (rank >= 0) {
    run.slurm.job_id = "4242";
    run.slurm.step_id = "0";
    run.slurm.rank = rank;
    run.slurm.local_rank = rank % 4;
    run.slurm.node_id = rank / 4;
    run.slurm.node_name = run.host;
    run.slurm.ntasks = 3;
    run.slurm.step_gpus = "0,1";
  }
  return run;
}

inline std::vector<DeviceDescription> make_devices(unsigned count) {
  std::vector<DeviceDescription> out;
  for (unsigned i = 0; i < count; ++i) {
    DeviceDescription d;
    d.index = i;
    d.name = "NVIDIA H100 80GB HBM3";
    d.uuid = "GPU-0000000" + std::to_string(i);
    d.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
    d.architecture = "Hopper";
    d.compute_capability = "9.0";
    d.memory_total_bytes = 85'520'809'984ULL;
    d.power_limit_w = 700.0;
    d.enforced_power_limit_w = 700.0;
    d.default_power_limit_w = 700.0;
    d.min_power_limit_w = 200.0;
    d.max_power_limit_w = 700.0;
    d.max_sm_clock_mhz = 1980;
    d.max_memory_clock_mhz = 2619;
    // max_graphics_clock_mhz left unknown: it must come back unknown, not 0.
    d.capabilities = {{"gpm", "GPM saturation metrics", true, ""},
                      {"nvlink", "NVLink throughput", false, "Not Supported"}};
    out.push_back(d);
  }
  return out;
}

// Sample `seq` of `device`: every metric present except memory_temperature_c, with energy_mj a
// large counter (~1e12) that must come back exactly.
inline SampleRow make_sample(unsigned device, std::int64_t seq) {
  SampleRow row;
  row.device_index = device;
  row.wall_ns = 1'714'566'896'000'000'000 + seq * 100'000'000;
  row.mono_ns = 5'000'000'000 + seq * 100'000'000;
  for (std::size_t i = 0; i < kStoredMetricCount; ++i) {  // what a sampler sets
    const auto metric = static_cast<Metric>(i);
    if (metric == Metric::MemoryTemperatureC) continue;
    row.set(metric, static_cast<double>(i) + 0.25 + static_cast<double>(device));
  }
  row.set(Metric::EnergyMj, 1'234'567'890'123.0 + static_cast<double>(seq));
  row.set(Metric::MemoryUsedBytes, 85'000'000'001.0);
  row.set(Metric::PowerW, 0.0);  // a real zero must stay a zero
  return row;
}

}  // namespace gpuscope::store::testing
