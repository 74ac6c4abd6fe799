// libFuzzer target: the exporter's request handling (`gpuscope serve`'s /metrics, /healthz and
// /). One MetricsServer listens on a loopback port for the whole run; each input is sent as raw
// bytes over a new connection (any method, path, headers, body or garbage) and its sending side
// closed, the answer read until the server closes too or 100 ms pass, and the server must then
// still answer GET /healthz: a request that crashes, hangs or wedges the server is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "exporter/exposition.hpp"
#include "exporter/latest_values.hpp"
#include "exporter/metrics_server.hpp"
#include "fuzz_sockets.hpp"

namespace {

using namespace gpuscope::exporter;
using fuzz_sockets::exchange;
using fuzz_sockets::free_port;

struct Server {
  Server()
      : values(gpus()),
        cache(values, Exposition(Naming::Gpuscope, ExportLabels{"fuzz", {}, ""}, gpus())),
        port(free_port()),
        server(ListenAddress{"127.0.0.1", port}, cache) {
    server.start();
  }
  static std::vector<GpuIdentity> gpus() {
    GpuIdentity gpu;
    gpu.uuid = "GPU-fuzz";
    gpu.name = "NVIDIA H100 80GB HBM3";
    return {gpu};
  }
  LatestValues values;
  ExpositionCache cache;
  int port;
  MetricsServer server;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Server* const server = new Server();  // for the whole run, as `serve` is
  (void)exchange(server->port, reinterpret_cast<const char*>(data), size, 100);
  static const std::string kHealth = "GET /healthz HTTP/1.1\r\nHost: fuzz\r\n\r\n";
  std::string health;
  for (int attempt = 0; attempt < 3 && health.empty(); ++attempt) {
    health = exchange(server->port, kHealth.data(), kHealth.size(), 5000);
  }
  if (health.rfind("HTTP/1.1 200", 0) != 0) {
    // On stdout: the runs close stderr (libevent warns of every malformed request there).
    std::printf("fuzz_http: after this input /healthz answers '%.60s'\n", health.c_str());
    std::fflush(stdout);
    std::abort();
  }
  return 0;
}
