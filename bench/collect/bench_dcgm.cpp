// The cost of the DCGM saturation source per device-sample, against the raw DCGM call it makes
// (as bench_sampler does for NVML). Simulated libdcgm on the a100-dcgm scenario by default; set
// GPUSCOPE_DCGM_LIBRARY (and GPUSCOPE_NVML_LIBRARY) to measure a real DCGM and driver.
//
//   BM_RawDcgmLatestValues  dcgmEntitiesGetLatestValues of the watched fields of one GPU
//   BM_DcgmFeedRead         DcgmFeed::read: that call plus blank checks and the catalog mapping
//   BM_DeviceReaderNoSource DeviceReader::read of an A100 with no saturation source
//   BM_DeviceReaderDcgm     DeviceReader::read of an A100 with DCGM: the NVML calls plus DCGM
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <thread>

#include "collect/describe.hpp"
#include "collect/saturation.hpp"
#include "core/clock.hpp"
#include "nvml/session.hpp"

namespace {

using namespace gpuscope;

struct Setup {
  std::shared_ptr<const nvml::Library> nvml_library;
  std::unique_ptr<nvml::Session> session;
  collect::BackendOptions backend;

  Setup() {
    const char* real_nvml = std::getenv("GPUSCOPE_NVML_LIBRARY");
    if (real_nvml == nullptr) {
      const std::string path = std::string(GPUSCOPE_BENCH_SCENARIO_DIR) + "/a100-dcgm.json";
      setenv("GPUSCOPE_SIM_SCENARIO", path.c_str(), 1);
    }
    if (std::getenv("GPUSCOPE_DCGM_LIBRARY") == nullptr) {
      setenv("GPUSCOPE_DCGM_LIBRARY", GPUSCOPE_BENCH_SIM_DCGM_LIBRARY, 1);
    }
    nvml_library = nvml::Library::open(
        {real_nvml != nullptr ? real_nvml : GPUSCOPE_BENCH_SIM_LIBRARY, real_nvml == nullptr});
    session = std::make_unique<nvml::Session>(nvml_library);
  }

  // GPU 0's reader with `source` ("dcgm", or "gpm" which an A100 cannot give: none).
  collect::GpuReaders readers(const std::string& source) {
    backend.metrics_source = source;
    const SystemDescription system = collect::describe_system(*session);
    std::vector<DeviceDescription> devices = {system.devices.at(0)};
    auto opened =
        collect::open_readers(*session, {0}, devices, backend, std::chrono::milliseconds(100));
    return std::move(opened.readers);
  }
};

void BM_RawDcgmLatestValues(benchmark::State& state) {
  Setup setup;
  auto library = dcgm::Library::open({std::getenv("GPUSCOPE_DCGM_LIBRARY")});
  dcgm::Session session(library, {});
  std::vector<unsigned short> fields;
  for (const auto& m : collect::dcgm_mappings()) {
    if (m.field <= 1012) fields.push_back(m.field);
  }
  auto watch = dcgm::Watch::start(session, {0}, fields, std::chrono::milliseconds(100));
  if (!watch) {
    state.SkipWithError(session.describe(watch.error()).c_str());
    return;
  }
  std::vector<dcgmFieldValue_v2> values;
  for (auto _ : state) benchmark::DoNotOptimize((*watch)->latest(0, values));
}
BENCHMARK(BM_RawDcgmLatestValues)->Unit(benchmark::kMicrosecond);

void BM_DcgmFeedRead(benchmark::State& state) {
  Setup setup;
  auto library = dcgm::Library::open({std::getenv("GPUSCOPE_DCGM_LIBRARY")});
  collect::DcgmFeed feed(std::make_unique<dcgm::Session>(library, dcgm::ConnectOptions{}));
  std::vector<std::string> notes;
  if (const auto why = feed.start(0, 0, std::chrono::milliseconds(100), notes); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // two samples: values to map
  unsigned failed = 0;
  for (auto _ : state) {
    SampleRow row;
    benchmark::DoNotOptimize(feed.read(0, row, failed));
    benchmark::DoNotOptimize(row);
  }
}
BENCHMARK(BM_DcgmFeedRead)->Unit(benchmark::kMicrosecond);

void reader_bench(benchmark::State& state, const std::string& source) {
  Setup setup;
  auto readers = setup.readers(source);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  for (auto _ : state) {
    SampleRow row;
    benchmark::DoNotOptimize(readers[0]->read(row, mono_now_ns(), true));
    benchmark::DoNotOptimize(row);
  }
}

void BM_DeviceReaderNoSource(benchmark::State& state) {
  reader_bench(state, "gpm");
}
BENCHMARK(BM_DeviceReaderNoSource)->Unit(benchmark::kMicrosecond);

void BM_DeviceReaderDcgm(benchmark::State& state) {
  reader_bench(state, "dcgm");
}
BENCHMARK(BM_DeviceReaderDcgm)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
