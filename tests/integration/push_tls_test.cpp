// --push over TLS against real endpoints on loopback, with certificates the test makes with the
// openssl command line (a CA, a server certificate for IP 127.0.0.1, a client certificate):
//  - a real VictoriaMetrics serving https (-tls) with a certificate of the test's own CA: with
//    --push-ca the samples arrive, without it the push says why and what to give;
//  - an endpoint that requires a client certificate (VictoriaMetrics' -mtls is in its enterprise
//    edition only, so python3's http.server wrapped in ssl with CERT_REQUIRED): with --push-cert
//    and --push-key `serve` delivers, without them the handshake is refused and nothing arrives.
// Skips only when victoria-metrics, openssl or python3 is absent (scripts/setup.sh installs them).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/ports.hpp"
#include "support/process.hpp"
#include "support/programs.hpp"

namespace gpuscope::testing {
namespace {

using namespace std::chrono_literals;

// ca.pem/ca.key, server.pem/server.key (CN and subjectAltName IP:127.0.0.1, signed by the CA) and
// client.pem/client.key (signed by the CA) in `dir`; ECDSA P-256, quick to make.
void make_certificates(const TempDir& dir) {
  const std::string script = R"(set -e
cd "$0"
key="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $key -keyout ca.key -out ca.pem -days 2 -subj /CN=gpuscope-test-ca
openssl req $key -keyout server.key -out server.csr -subj /CN=127.0.0.1
printf 'subjectAltName=IP:127.0.0.1\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
  -days 2 -extfile server.ext
openssl req $key -keyout client.key -out client.pem.csr -subj /CN=gpuscope-test-client
openssl x509 -req -in client.pem.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem \
  -days 2
)";
  const ProcessResult made = run_process({"/bin/sh", "-c", script, dir.path()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
}

bool tools_present(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (find_program(name).empty()) return false;
  }
  return true;
}

std::map<std::string, std::string> sim_env(const TempDir& dir) {
  return {{"GPUSCOPE_SIM_STATE", dir.file("sim-state.json")}};
}

// curl (the command) against the https server, trusting the test's CA: what it printed, or "".
std::string curl_https(const TempDir& dir, int port, const std::string& path,
                       const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {"curl", "-sf", "--cacert", dir.file("ca.pem"),
                                   "https://127.0.0.1:" + std::to_string(port) + path};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const ProcessResult r = run_process(argv);
  return r.exit_code == 0 ? r.out : "";
}

class HttpsVictoriaMetrics {
 public:
  explicit HttpsVictoriaMetrics(const TempDir& dir) : dir_(dir), port_(free_port()) {
    process_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{
            find_program("victoria-metrics"), "-storageDataPath=" + dir.file("vm-data"),
            "-httpListenAddr=127.0.0.1:" + std::to_string(port_), "-loggerLevel=ERROR", "-tls",
            "-tlsCertFile=" + dir.file("server.pem"), "-tlsKeyFile=" + dir.file("server.key")},
        std::map<std::string, std::string>{}, dir.file("vm.out"), dir.file("vm.err"));
    EXPECT_TRUE(eventually([&] { return !curl_https(dir_, port_, "/health").empty(); }))
        << read_file(dir.file("vm.err"));
  }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  // The stored gpuscope_power_watts series as VictoriaMetrics exports them (JSON lines).
  std::string power_series() const {
    return curl_https(dir_, port_, "/api/v1/export",
                      {"--data-urlencode", "match[]=gpuscope_power_watts"});
  }

 private:
  const TempDir& dir_;
  int port_;
  std::unique_ptr<BackgroundProcess> process_;
};

TEST(PushTls, VictoriaMetricsOverHttpsWithTheSitesOwnCa) {
  if (!tools_present({"victoria-metrics", "openssl", "curl"})) GTEST_SKIP() << "tools missing";
  TempDir dir;
  make_certificates(dir);
  HttpsVictoriaMetrics vm(dir);

  const ProcessResult untrusted =
      run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", dir.file("untrusted.db"), "--push",
                    vm.url(), "--push-batch-ms", "100", "--", "sleep", "1"},
                   sim_env(dir));
  EXPECT_EQ(untrusted.exit_code, 0) << untrusted.err;  // the job's status, whatever the push did
  EXPECT_NE(untrusted.err.find("cannot deliver to " + vm.url()), std::string::npos)
      << untrusted.err;
  EXPECT_NE(untrusted.err.find("give its certificate with --push-ca FILE"), std::string::npos)
      << untrusted.err;

  const ProcessResult trusted = run_gpuscope(
      {"profile", "--simulate", "h100", "-q", "-o", dir.file("trusted.db"), "--push", vm.url(),
       "--push-ca", dir.file("ca.pem"), "--push-batch-ms", "100", "--", "sleep", "1"},
      sim_env(dir));
  ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  EXPECT_EQ(trusted.err.find("push:"), std::string::npos) << trusted.err;
  EXPECT_TRUE(eventually(
      [&] { return vm.power_series().find("\"gpuscope_power_watts\"") != std::string::npos; }));
}

// An https endpoint that requires a client certificate signed by the CA; what it receives is
// appended to `received`.
constexpr const char* kMutualTlsServer = R"(
import http.server, ssl, sys
port, cert, key, ca, received = sys.argv[1:6]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(received, "ab") as out:
            out.write(body)
        self.send_response(204)
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
context.verify_mode = ssl.CERT_REQUIRED
context.load_verify_locations(ca)
server.socket = context.wrap_socket(server.socket, server_side=True)
open(received + ".ready", "w").close()
server.serve_forever()
)";

TEST(PushTls, ServePushesWithAClientCertificateWhereOneIsRequired) {
  if (!tools_present({"python3", "openssl"})) GTEST_SKIP() << "tools missing";
  TempDir dir;
  make_certificates(dir);
  const int port = free_port();
  const std::string received = dir.file("received.txt");
  BackgroundProcess server(
      {find_program("python3"), "-c", kMutualTlsServer, std::to_string(port),
       dir.file("server.pem"), dir.file("server.key"), dir.file("ca.pem"), received},
      {}, dir.file("server.out"), dir.file("server.err"));
  ASSERT_TRUE(BackgroundProcess::wait_for_file(received + ".ready", 30000))
      << read_file(dir.file("server.err"));
  const std::string url = "https://127.0.0.1:" + std::to_string(port);

  // Without a client certificate the handshake is refused: said, nothing arrives.
  const ProcessResult refused = run_gpuscope(
      {"profile", "--simulate", "h100", "-q", "-o", dir.file("refused.db"), "--push", url,
       "--push-ca", dir.file("ca.pem"), "--push-batch-ms", "100", "--", "sleep", "1"},
      sim_env(dir));
  EXPECT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_NE(refused.err.find("cannot deliver to " + url), std::string::npos) << refused.err;
  EXPECT_EQ(read_file(received), "");

  const int metrics_port = free_port();
  auto serve = start_gpuscope(
      {"serve", "--simulate", "h100", "--listen", "127.0.0.1:" + std::to_string(metrics_port),
       "--interval", "200", "--push", url, "--push-ca", dir.file("ca.pem"), "--push-cert",
       dir.file("client.pem"), "--push-key", dir.file("client.key"), "--push-batch-ms", "100"},
      sim_env(dir), dir.file("serve.out"), dir.file("serve.err"));
  EXPECT_TRUE(eventually([&] {
    return read_file(received).find("gpuscope_power_watts{") != std::string::npos;
  })) << read_file(dir.file("serve.err"));
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0);
  EXPECT_EQ(read_file(dir.file("serve.err")).find("push:"), std::string::npos)
      << read_file(dir.file("serve.err"));
}

TEST(PushTls, BadFilesAreRefusedBeforeAnythingStarts) {
  TempDir dir;
  std::ofstream(dir.file("key.pem")) << "-----BEGIN PRIVATE KEY-----\n";
  const auto env = sim_env(dir);
  ProcessResult r = run_gpuscope({"serve", "--simulate", "h100", "--push", "https://127.0.0.1:9",
                                  "--push-key", dir.file("key.pem")},
                                 env);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--push-key is given without --push-cert"), std::string::npos) << r.err;
  r = run_gpuscope({"serve", "--simulate", "h100", "--push", "https://127.0.0.1:9", "--push-ca",
                    dir.file("missing.pem")},
                   env);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--push-ca " + dir.file("missing.pem") + " cannot be read"),
            std::string::npos)
      << r.err;
  r = run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", dir.file("run.db"), "--push-ca",
                    dir.file("key.pem"), "--", "true"},
                   env);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("are for --push"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpuscope::testing
