// The AMD path of the sampling loop (part of bench_sampler): AmdReader::read against the raw
// AMD SMI calls it makes. The simulated AMD SMI by default; set GPUSCOPE_AMD_SMI_LIBRARY (or
// GPUSCOPE_ROCM_SMI_LIBRARY) to a real library to measure a real one.
//
//   BM_RawAmdCalls      the calls AmdReader::read makes, issued directly (one device-sample)
//   BM_AmdReaderRead    AmdReader::read itself: the calls plus the energy counter's bookkeeping
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "amd/session.hpp"
#include "collect/amd_reader.hpp"
#include "core/clock.hpp"

namespace {

using namespace gpuscope;

std::unique_ptr<amd::Session> open_amd() {
  amd::OpenOptions options;
  const char* amd_smi = std::getenv("GPUSCOPE_AMD_SMI_LIBRARY");
  const char* rocm_smi = std::getenv("GPUSCOPE_ROCM_SMI_LIBRARY");
  if (amd_smi != nullptr || rocm_smi != nullptr) {
    options.amd_smi_path = amd_smi != nullptr ? amd_smi : "";
    options.rocm_smi_path = rocm_smi != nullptr ? rocm_smi : "";
    return amd::Session::open(options);
  }
  const std::string path = std::string(GPUSCOPE_BENCH_SCENARIO_DIR) + "/mi300x.json";
  setenv("GPUSCOPE_SIM_SCENARIO", path.c_str(), 1);
  options.amd_smi_path = GPUSCOPE_BENCH_SIM_AMD_SMI_LIBRARY;
  options.simulated = true;
  return amd::Session::open(options);
}

// The same calls as AmdReader::read on a GPU that answers every one.
void raw_sample(const amd::Device& d) {
  benchmark::DoNotOptimize(d.average_power_w());
  benchmark::DoNotOptimize(d.energy());
  benchmark::DoNotOptimize(d.activity());
  benchmark::DoNotOptimize(d.memory_used_bytes());
  benchmark::DoNotOptimize(d.temperature_c(amd::Sensor::Hotspot));
  benchmark::DoNotOptimize(d.temperature_c(amd::Sensor::Memory));
  benchmark::DoNotOptimize(d.gfx_clock_mhz());
  benchmark::DoNotOptimize(d.power_cap());
}

void BM_RawAmdCalls(benchmark::State& state) {
  const auto session = open_amd();
  const amd::Device& device = *session->devices().at(0);
  for (auto _ : state) raw_sample(device);
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(session->library_name());
}
BENCHMARK(BM_RawAmdCalls)->MinTime(2.0);

void BM_AmdReaderRead(benchmark::State& state) {
  const auto session = open_amd();
  std::vector<std::string> notes;
  collect::AmdReader reader(*session->devices().at(0), 0, 750.0, notes);
  for (auto _ : state) {
    SampleRow row;
    benchmark::DoNotOptimize(reader.read(row, mono_now_ns(), true));
    benchmark::DoNotOptimize(row);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(session->library_name());
}
BENCHMARK(BM_AmdReaderRead)->MinTime(2.0);

}  // namespace
