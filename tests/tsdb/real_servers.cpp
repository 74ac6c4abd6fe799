#include "real_servers.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/ports.hpp"
#include "support/programs.hpp"

extern char** environ;

namespace gpuscope::tsdb::testing {
namespace {

using gpuscope::testing::free_port;

int spawn(const std::vector<std::string>& argv, const std::string& log_file) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}

std::unique_ptr<RealServer> start_ready(const std::function<std::vector<std::string>(int)>& argv,
                                        const std::string& log_file,
                                        const std::string& ready_path) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int port = free_port();
    auto server = std::make_unique<RealServer>(argv(port), port, log_file);
    const bool up = eventually([&] {
      if (server->exited()) return true;
      httplib::Client client("127.0.0.1", port);
      client.set_connection_timeout(1, 0);
      auto r = client.Get(ready_path.c_str());
      return r && (r->status == 200 || r->status == 401);
    });
    if (up && !server->exited()) return server;
    if (server->log().find("address already in use") == std::string::npos) {
      throw std::runtime_error("the server did not come up: " + server->log());
    }
  }
  throw std::runtime_error("no free port for the server");
}

}  // namespace

RealServer::RealServer(std::vector<std::string> argv, int port, std::string log_file)
    : port_(port), log_file_(std::move(log_file)) {
  pid_ = spawn(argv, log_file_);
}

RealServer::~RealServer() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
}

bool RealServer::exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return true;
  }
  return false;
}

std::string RealServer::log() const {
  std::ifstream in(log_file_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<RealServer> start_victoria_metrics(const std::string& dir,
                                                   const std::vector<std::string>& extra) {
  const std::string binary = find_program("victoria-metrics");
  if (binary.empty()) return nullptr;
  return start_ready(
      [&](int port) {
        std::vector<std::string> argv = {binary, "-storageDataPath=" + dir + "/vm-data",
                                         "-httpListenAddr=127.0.0.1:" + std::to_string(port),
                                         "-retentionPeriod=100y", "-loggerLevel=ERROR"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return argv;
      },
      dir + "/vm.log", "/health");
}

void import_into_victoria_metrics(int port, const std::string& text,
                                  const std::string& basic_auth) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(120, 0);
  if (!basic_auth.empty()) {
    const auto colon = basic_auth.find(':');
    client.set_basic_auth(basic_auth.substr(0, colon), basic_auth.substr(colon + 1));
  }
  auto r = client.Post("/api/v1/import/prometheus", text, "text/plain");
  if (!r || r->status / 100 != 2) {
    throw std::runtime_error("import failed: " + (r ? r->body : std::string("no answer")));
  }
  r = client.Get("/internal/force_flush");
  if (!r || r->status != 200) throw std::runtime_error("force_flush failed");
}

bool backfill_prometheus(const std::string& openmetrics, const std::string& data_dir,
                         const std::string& scratch_dir) {
  const std::string promtool = find_program("promtool");
  if (promtool.empty()) return false;
  const std::string input = scratch_dir + "/backfill.om";
  std::ofstream(input) << openmetrics;
  const int pid = spawn({promtool, "tsdb", "create-blocks-from", "openmetrics", input, data_dir},
                        scratch_dir + "/promtool.log");
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(scratch_dir + "/promtool.log");
    std::stringstream log;
    log << in.rdbuf();
    throw std::runtime_error("promtool failed: " + log.str());
  }
  return true;
}

std::unique_ptr<RealServer> start_prometheus(const std::string& dir, const std::string& data_dir,
                                             const std::vector<std::string>& extra) {
  const std::string binary = find_program("prometheus");
  if (binary.empty()) return nullptr;
  const std::string config = dir + "/prometheus.yml";
  std::ofstream(config) << "global:\n  scrape_interval: 15s\nscrape_configs: []\n";
  return start_ready(
      [&](int port) {
        std::vector<std::string> argv = {binary,
                                         "--config.file=" + config,
                                         "--storage.tsdb.path=" + data_dir,
                                         "--storage.tsdb.retention.time=100y",
                                         "--web.listen-address=127.0.0.1:" + std::to_string(port),
                                         "--log.level=error"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return argv;
      },
      dir + "/prometheus.log", "/-/ready");
}

}  // namespace gpuscope::tsdb::testing
