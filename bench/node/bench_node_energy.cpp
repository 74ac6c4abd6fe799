// The cost of one read of the node's energy sources, on made-up sysfs trees in a temporary
// folder (a real /sys attribute costs about the same open/read/close; RAPL's MSR read inside the
// kernel adds a few microseconds per domain on real hardware, which these figures do not hold).
// The budget is 0.1 % of a core at a 1 s cadence, i.e. 1 ms of CPU per read.
//
//   BM_PowercapReadTwoSockets/D  PowercapReader::read of 2 sockets × D domains (package, dram,
//                                core, uncore: D = 2 a server, D = 4 with core and uncore)
//   BM_GraceReadGh200            GracePowerReader::read of module, grace, cpu and sysio
//   BM_PowercapDiscovery         discover_powercap of the 2 × 4 tree (once per run)
//   BM_NodeSamplerTwoSockets     what profile's slow thread does each second:
//   NodeEnergySampler::read
//                                of 2 sockets × (package, dram) into stored readings
//
// Counter core_pct_at_1s: the CPU time of one read as a percentage of one core at 1 read/s.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "node/grace_hwmon.hpp"
#include "node/node_sampler.hpp"
#include "node/powercap.hpp"
#include "node/powercap_reader.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gpuscope::node;

class Tree {
 public:
  Tree() {
    std::string pattern = (fs::temp_directory_path() / "gpuscope-bench-node-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
  }
  ~Tree() {
    std::error_code error;
    fs::remove_all(root_, error);
  }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  const fs::path& root() const { return root_; }
  void write(const fs::path& relative, const std::string& text) const {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  void zone(const std::string& zone, const std::string& name) const {
    const fs::path folder = fs::path("class/powercap") / zone;
    write(folder / "name", name + "\n");
    write(folder / "energy_uj", "123456789012\n");
    write(folder / "max_energy_range_uj", "262143328850\n");
  }

 private:
  fs::path root_;
};

void two_sockets(const Tree& tree, int domains) {
  const char* names[] = {"dram", "core", "uncore"};
  for (int socket = 0; socket < 2; ++socket) {
    const std::string zone = "intel-rapl:" + std::to_string(socket);
    tree.zone(zone, "package-" + std::to_string(socket));
    for (int sub = 0; sub + 1 < domains; ++sub) {
      tree.zone(zone + ":" + std::to_string(sub), names[sub]);
    }
  }
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void core_share(benchmark::State& state, double cpu_start) {
  const double per_read = (cpu_seconds() - cpu_start) / static_cast<double>(state.iterations());
  state.counters["core_pct_at_1s"] = per_read * 100.0;
}

void BM_PowercapReadTwoSockets(benchmark::State& state) {
  Tree tree;
  two_sockets(tree, static_cast<int>(state.range(0)));
  PowercapReader reader(discover_powercap(tree.root()).domains);
  std::vector<DomainEnergy> readings;
  const double start = cpu_seconds();
  for (auto _ : state) {
    reader.read(readings);
    benchmark::DoNotOptimize(readings.data());
  }
  core_share(state, start);
  if (readings.size() != static_cast<std::size_t>(2 * state.range(0))) state.SkipWithError("short");
}
BENCHMARK(BM_PowercapReadTwoSockets)->Arg(2)->Arg(4);

void BM_GraceReadGh200(benchmark::State& state) {
  Tree tree;
  const char* labels[] = {"Module", "Grace", "CPU", "SysIO"};
  for (int i = 0; i < 4; ++i) {
    const fs::path device = "class/hwmon/hwmon" + std::to_string(i + 1) + "/device";
    tree.write(device / "power1_average", "98000000\n");
    tree.write(device / "power1_oem_info", std::string(labels[i]) + " Power Socket 0\n");
  }
  GracePowerReader reader(discover_grace_hwmon(tree.root()).sensors);
  std::vector<PowerSample> samples;
  const double start = cpu_seconds();
  for (auto _ : state) {
    reader.read(samples);
    benchmark::DoNotOptimize(samples.data());
  }
  core_share(state, start);
  if (samples.size() != 4) state.SkipWithError("short");
}
BENCHMARK(BM_GraceReadGh200);

void BM_PowercapDiscovery(benchmark::State& state) {
  Tree tree;
  two_sockets(tree, 4);
  for (auto _ : state) benchmark::DoNotOptimize(discover_powercap(tree.root()).domains.size());
}
BENCHMARK(BM_PowercapDiscovery);

void BM_NodeSamplerTwoSockets(benchmark::State& state) {
  Tree tree;
  two_sockets(tree, 2);
  NodeEnergySampler sampler(tree.root());
  std::vector<gpuscope::NodeEnergySample> readings;
  const double start = cpu_seconds();
  for (auto _ : state) {
    readings.clear();
    sampler.read(readings);
    benchmark::DoNotOptimize(readings.data());
  }
  core_share(state, start);
  if (readings.size() != 4) state.SkipWithError("short");
}
BENCHMARK(BM_NodeSamplerTwoSockets);

}  // namespace

BENCHMARK_MAIN();
