// Exporter benchmark: runs `gpuscope serve --simulate h100x8-idle-start --interval 1000` (8
// simulated H100s sampled every second) and measures
//   1. its resident memory (VmRSS, VmHWM) and CPU use while idle (Prometheus-like: one scrape
//      every 15 s), and
//   2. scrape latency under an open-loop load of RATE requests/s over keep-alive connections
//      (wrk2-style: requests are due on a fixed schedule; latency counts from when a request was
//      due, so a stall is not hidden), plus CPU and memory during the load.
// Usage: bench_exporter [IDLE_SECONDS=30] [LOAD_SECONDS=20] [RATE=1000] [CONNECTIONS=4] [tls]
// With `tls` the exporter serves TLS with basic authentication (--web-config, a certificate the
// openssl command makes, a bcrypt hash of cost 10) and every client verifies it and sends the
// password: the cost of the exporter on a shared network (docs/live.md, "Security").
// Figures go to docs/performance.md with the machine they came from.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

struct Usage {
  double cpu_s = 0;
  double rss_kb = 0;
  double hwm_kb = 0;
  double pss_kb = 0;      // proportional share of shared pages
  double private_kb = 0;  // pages only this process uses (USS)
};

Usage usage_of(pid_t pid) {
  Usage u;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
    if (i == 15) break;
  }
  u.cpu_s = ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) u.rss_kb = std::stod(line.substr(6));
    if (line.rfind("VmHWM:", 0) == 0) u.hwm_kb = std::stod(line.substr(6));
  }
  std::ifstream rollup(fmt::format("/proc/{}/smaps_rollup", pid));
  for (std::string line; std::getline(rollup, line);) {
    if (line.rfind("Pss:", 0) == 0) u.pss_kb = std::stod(line.substr(4));
    if (line.rfind("Private_Clean:", 0) == 0) u.private_kb += std::stod(line.substr(14));
    if (line.rfind("Private_Dirty:", 0) == 0) u.private_kb += std::stod(line.substr(14));
  }
  return u;
}

// bcrypt of "bench-password" at cost 10, as htpasswd -B makes by default.
constexpr const char* kBenchHash = "$2b$10$wvqB3wRlytrrw5i5cTUxM.kM13Z2MrLxKoG8GZEt8Ua0JyIo4zmie";

// A certificate for 127.0.0.1 and the web config in a fresh folder; the folder's path.
std::string make_web_config() {
  char folder[] = "/tmp/gpuscope-bench-tls.XXXXXX";
  if (mkdtemp(folder) == nullptr) return {};
  const std::string dir = folder;
  const std::string command = fmt::format(
      "openssl req -x509 -newkey rsa:2048 -nodes -keyout {0}/key.pem -out {0}/cert.pem -days 2 "
      "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null && chmod 600 "
      "{0}/key.pem",
      dir);
  if (std::system(command.c_str()) != 0) return {};
  std::ofstream(dir + "/web.yml")
      << "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
      << "basic_auth_users:\n  bench: '" << kBenchHash << "'\n";
  return dir;
}

std::unique_ptr<httplib::Client> client_for(int port, const std::string& tls_dir) {
  if (tls_dir.empty()) return std::make_unique<httplib::Client>("127.0.0.1", port);
  auto client = std::make_unique<httplib::Client>(fmt::format("https://127.0.0.1:{}", port));
  client->set_ca_cert_path(tls_dir + "/cert.pem");
  client->set_basic_auth("bench", "bench-password");
  return client;
}

double percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto k = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1));
  return sorted[k];
}

}  // namespace

int main(int argc, char** argv) {
  const int idle_s = argc > 1 ? std::atoi(argv[1]) : 30;
  const int load_s = argc > 2 ? std::atoi(argv[2]) : 20;
  const int rate = argc > 3 ? std::atoi(argv[3]) : 1000;
  const int connections = argc > 4 ? std::atoi(argv[4]) : 4;
  const std::string tls_dir = argc > 5 && std::string(argv[5]) == "tls" ? make_web_config() : "";
  if (argc > 5 && tls_dir.empty()) {
    fmt::print(stderr, "bench_exporter: the openssl command could not make a certificate\n");
    return 1;
  }
  const std::string web_config = tls_dir.empty() ? "" : tls_dir + "/web.yml";
  const int port = free_port();

  const std::string listen = fmt::format("127.0.0.1:{}", port);
  const pid_t pid = fork();
  if (pid == 0) {
    if (web_config.empty()) {
      execl(GPUSCOPE_BENCH_BINARY, "gpuscope", "serve", "--simulate", "h100x8-idle-start",
            "--interval", "1000", "--listen", listen.c_str(), static_cast<char*>(nullptr));
    } else {
      execl(GPUSCOPE_BENCH_BINARY, "gpuscope", "serve", "--simulate", "h100x8-idle-start",
            "--interval", "1000", "--listen", listen.c_str(), "--web-config", web_config.c_str(),
            static_cast<char*>(nullptr));
    }
    _exit(127);
  }
  auto probe_client = client_for(port, tls_dir);
  httplib::Client& probe = *probe_client;
  std::string page;
  for (int i = 0; i < 300; ++i) {
    auto r = probe.Get("/metrics");
    if (r && r->status == 200 && r->body.find("gpuscope_sm_active_ratio") != std::string::npos) {
      page = r->body;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (page.empty()) {
    fmt::print(stderr, "bench_exporter: gpuscope serve did not come up\n");
    kill(pid, SIGTERM);
    return 1;
  }
  std::size_t series = 0;
  for (char c : page) series += c == '\n' ? 1 : 0;
  fmt::print("gpuscope serve, 8 simulated H100s, 1 s sampling, {}; /metrics: {} bytes, {} lines\n",
             tls_dir.empty() ? "plain HTTP" : "TLS with basic authentication", page.size(), series);

  // 1. Idle: a scrape every 15 s, as a default Prometheus does.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const Usage idle_start = usage_of(pid);
  const auto idle_begin = Clock::now();
  for (int s = 0; s < idle_s; ++s) {
    if (s % 15 == 0) probe.Get("/metrics");
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  const Usage idle_end = usage_of(pid);
  const double idle_wall = std::chrono::duration<double>(Clock::now() - idle_begin).count();
  fmt::print(
      "idle {:.0f} s: CPU {:.2f} % of one core, RSS {:.1f} MB (peak {:.1f} MB), PSS {:.1f} MB, "
      "private (USS) {:.1f} MB\n",
      idle_wall, 100 * (idle_end.cpu_s - idle_start.cpu_s) / idle_wall, idle_end.rss_kb / 1024.0,
      idle_end.hwm_kb / 1024.0, idle_end.pss_kb / 1024.0, idle_end.private_kb / 1024.0);

  // 2. Open-loop load.
  const auto load_begin = Clock::now() + std::chrono::milliseconds(100);
  const long total = static_cast<long>(rate) * load_s;
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(connections));
  std::vector<std::vector<double>> service(static_cast<std::size_t>(connections));
  std::atomic<long> errors{0};
  std::vector<std::thread> workers;
  const Usage load_start = usage_of(pid);
  for (int c = 0; c < connections; ++c) {
    workers.emplace_back([&, c] {
      auto owned = client_for(port, tls_dir);
      httplib::Client& client = *owned;
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(5, 0);
      const double period_ns = 1e9 / rate;
      for (long i = c; i < total; i += connections) {
        const auto due = load_begin + std::chrono::nanoseconds(
                                          static_cast<long>(static_cast<double>(i) * period_ns));
        std::this_thread::sleep_until(due);
        const auto sent = Clock::now();
        auto r = client.Get("/metrics");
        const auto done = Clock::now();
        if (!r || r->status != 200 || r->body.size() < page.size() / 2) {
          ++errors;
          continue;
        }
        latencies[static_cast<std::size_t>(c)].push_back(
            std::chrono::duration<double, std::milli>(done - due).count());
        service[static_cast<std::size_t>(c)].push_back(
            std::chrono::duration<double, std::milli>(done - sent).count());
      }
    });
  }
  for (auto& w : workers) w.join();
  const double load_wall = std::chrono::duration<double>(Clock::now() - load_begin).count();
  const Usage load_end = usage_of(pid);
  std::vector<double> all;
  std::vector<double> all_service;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  for (const auto& l : service) all_service.insert(all_service.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  std::sort(all_service.begin(), all_service.end());
  fmt::print(
      "load {} req/s over {} keep-alive connections for {:.1f} s: {} ok, {} errors, "
      "achieved {:.0f} req/s\n",
      rate, connections, load_wall, all.size(), errors.load(),
      static_cast<double>(all.size()) / load_wall);
  fmt::print(
      "  latency from due time (ms): p50 {:.3f}  p90 {:.3f}  p99 {:.3f}  p99.9 {:.3f}  "
      "max {:.3f}\n",
      percentile(all, 50), percentile(all, 90), percentile(all, 99), percentile(all, 99.9),
      all.empty() ? 0 : all.back());
  fmt::print(
      "  service time (ms):          p50 {:.3f}  p90 {:.3f}  p99 {:.3f}  p99.9 {:.3f}  "
      "max {:.3f}\n",
      percentile(all_service, 50), percentile(all_service, 90), percentile(all_service, 99),
      percentile(all_service, 99.9), all_service.empty() ? 0 : all_service.back());
  fmt::print("  exporter CPU {:.1f} % of one core, RSS {:.1f} MB (peak {:.1f} MB)\n",
             100 * (load_end.cpu_s - load_start.cpu_s) / load_wall, load_end.rss_kb / 1024.0,
             load_end.hwm_kb / 1024.0);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!tls_dir.empty()) std::filesystem::remove_all(tls_dir);
  return 0;
}
