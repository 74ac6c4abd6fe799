// Cost of one NVML call through gpuscope's loader: the baseline the sampling loop is measured
// against. Runs against the simulated driver by default; set GPUSCOPE_NVML_LIBRARY to a real
// libnvidia-ml.so.1 to measure a real driver.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "nvml/gpm.hpp"
#include "nvml/session.hpp"

namespace {

using namespace gpuscope::nvml;

struct Fixture {
  std::shared_ptr<const Library> library;
  std::unique_ptr<Session> session;
  std::unique_ptr<Device> device;

  Fixture() {
    const char* real = std::getenv("GPUSCOPE_NVML_LIBRARY");
    if (real == nullptr) setenv("GPUSCOPE_SIM_SCENARIO", GPUSCOPE_BENCH_SCENARIO, 0);
    library = Library::open({real != nullptr ? real : GPUSCOPE_BENCH_SIM_LIBRARY, real == nullptr});
    session = std::make_unique<Session>(library);
    device = std::make_unique<Device>(session->device(0));
  }
};

Fixture& fixture() {
  static Fixture f;  // one driver session for the whole benchmark run
  return f;
}

void BM_PowerUsage(benchmark::State& state) {
  auto& f = fixture();
  for (auto _ : state) benchmark::DoNotOptimize(f.device->power_usage_mw());
}
BENCHMARK(BM_PowerUsage);

void BM_EnergyCounter(benchmark::State& state) {
  auto& f = fixture();
  for (auto _ : state) benchmark::DoNotOptimize(f.device->total_energy_mj());
}
BENCHMARK(BM_EnergyCounter);

void BM_Utilization(benchmark::State& state) {
  auto& f = fixture();
  for (auto _ : state) benchmark::DoNotOptimize(f.device->utilization());
}
BENCHMARK(BM_Utilization);

void BM_FieldValuesPowerEnergy(benchmark::State& state) {
  auto& f = fixture();
  nvmlFieldValue_t values[3]{};
  values[0].fieldId = kFieldPowerInstant;
  values[1].fieldId = kFieldPowerAverage;
  values[2].fieldId = kFieldTotalEnergyConsumption;
  for (auto _ : state) benchmark::DoNotOptimize(f.device->field_values(values));
}
BENCHMARK(BM_FieldValuesPowerEnergy);

void BM_GpmSampleAndMetrics(benchmark::State& state) {
  auto& f = fixture();
  auto a = GpmSample::allocate(f.library);
  auto b = GpmSample::allocate(f.library);
  if (!a || !b) {
    state.SkipWithError("GPM not supported");
    return;
  }
  const unsigned ids[] = {kGpmSmUtil,
                          kGpmSmOccupancy,
                          kGpmAnyTensorUtil,
                          kGpmDramBwUtil,
                          kGpmFp64Util,
                          kGpmFp32Util,
                          kGpmFp16Util,
                          kGpmPcieTxPerSec,
                          kGpmPcieRxPerSec,
                          kGpmNvlinkTotalTxPerSec,
                          kGpmNvlinkTotalRxPerSec};
  GpmQuery query(f.library, ids);
  std::optional<double> out[std::size(ids)];
  (void)a->take(*f.device);
  for (auto _ : state) {
    (void)b->take(*f.device);
    benchmark::DoNotOptimize(query.compute(*a, *b, out));
    std::swap(*a, *b);
  }
}
BENCHMARK(BM_GpmSampleAndMetrics);

}  // namespace

BENCHMARK_MAIN();
