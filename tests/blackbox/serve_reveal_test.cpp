// What `gpuscope serve` reveals (docs/live.md, "What it reveals"), against real processes the
// simulated driver lists (GPUSCOPE_SIM_PROCESSES_FILE) and resolved through the real /proc:
//  - on a listener other machines reach, the per-process series leave out user and command unless
//    --process-series full asks for them, and --process-series off has no per-process series;
//  - secrets planted everywhere serve could pick them up (a process's environment and command
//    line, the push's bearer token and basic-auth password, a URL's userinfo, a push server that
//    echoes them back) appear in none of its outputs: stderr, stdout, /metrics, saved samples.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/ports.hpp"
#include "support/process.hpp"
#include "support/programs.hpp"
#include "support/scrape.hpp"

namespace gpuscope::testing {
namespace {

using namespace std::chrono_literals;

// A process the simulated driver says uses GPU 0, listed once it runs `argv` (serve resolves a
// pid once: seen before its exec, it would keep the test's own name).
struct ListedProcess {
  ListedProcess(const TempDir& dir, const std::vector<std::string>& argv,
                const std::map<std::string, std::string>& env)
      : process(argv, env, dir.file("job.out"), dir.file("job.err")) {
    const std::string cmdline = "/proc/" + std::to_string(process.pid()) + "/cmdline";
    EXPECT_TRUE(eventually([&] { return read_file(cmdline).rfind(argv[0] + '\0', 0) == 0; }));
    std::ofstream(dir.file("processes.txt")) << "0 " << process.pid() << " 1024\n";
  }
  BackgroundProcess process;
};

struct Served {
  std::unique_ptr<BackgroundProcess> serve;
  std::string page;  // the first page that showed what was waited for
};

// serve on `listen` (scraped on 127.0.0.1) with `extra` arguments, until its page holds `wanted`.
Served serve_until(const TempDir& dir, const std::string& name, const std::string& listen, int port,
                   const std::vector<std::string>& extra, const std::string& wanted,
                   std::map<std::string, std::string> env = {}) {
  env["GPUSCOPE_SIM_STATE"] = dir.file("state-" + name + ".json");
  env["GPUSCOPE_SIM_PROCESSES_FILE"] = dir.file("processes.txt");
  std::vector<std::string> args = {"serve", "--simulate", "h100", "--listen",
                                   listen,  "--interval", "200",  "--process-sampling-ms",
                                   "200"};
  args.insert(args.end(), extra.begin(), extra.end());
  Served served;
  served.serve = start_gpuscope(args, env, dir.file(name + ".out"), dir.file(name + ".err"));
  EXPECT_TRUE(eventually([&] {
    const auto page = get_metrics(port);
    if (page) served.page = *page;
    return page && page->find(wanted) != std::string::npos;
  })) << read_file(dir.file(name + ".err"))
      << served.page;
  return served;
}

std::string any_interface(int port) {
  return "0.0.0.0:" + std::to_string(port);
}

TEST(ServeReveal, ANonLoopbackListenerLeavesOutUserAndCommandUnlessAskedFor) {
  TempDir dir;
  ListedProcess job(dir, {"sleep", "600"}, {{"SLURM_JOB_ID", "4242"}});
  const std::string pid = "pid=\"" + std::to_string(job.process.pid()) + "\"";

  int port = free_port();
  Served safe = serve_until(dir, "safe", any_interface(port), port, {}, pid);
  EXPECT_NE(safe.page.find("gpuscope_process_memory_used_bytes{"), std::string::npos);
  EXPECT_NE(safe.page.find(pid + ",slurm_job_id=\"4242\"}"), std::string::npos) << safe.page;
  EXPECT_EQ(safe.page.find("user=\""), std::string::npos) << safe.page;
  EXPECT_EQ(safe.page.find("command=\""), std::string::npos) << safe.page;
  safe.serve->signal(SIGTERM);
  EXPECT_EQ(safe.serve->wait(), 0);
  const std::string said = read_file(dir.file("safe.err"));
  EXPECT_NE(said.find("note: per-process series leave out the user and command labels"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("--process-series full adds them"), std::string::npos) << said;

  port = free_port();
  Served full =
      serve_until(dir, "full", any_interface(port), port, {"--process-series", "full"}, pid);
  EXPECT_NE(full.page.find(pid + ",command=\"sleep\",user=\""), std::string::npos) << full.page;
  full.serve->signal(SIGTERM);
  EXPECT_EQ(full.serve->wait(), 0);
  EXPECT_EQ(read_file(dir.file("full.err")).find("leave out"), std::string::npos);

  // Off: the GPU's series still say which job uses it (so the processes were looked at), but no
  // process has a series of its own.
  port = free_port();
  Served off = serve_until(dir, "off", any_interface(port), port, {"--process-series", "off"},
                           "slurm_job_id=\"4242\"");
  EXPECT_NE(off.page.find("gpuscope_power_watts{"), std::string::npos) << off.page;
  EXPECT_EQ(off.page.find("gpuscope_process"), std::string::npos) << off.page;
  EXPECT_EQ(off.page.find(pid), std::string::npos) << off.page;
}

TEST(ServeReveal, LoopbackKeepsEveryLabelAndABadChoiceIsAUsageError) {
  TempDir dir;
  ListedProcess job(dir, {"sleep", "600"}, {});
  const std::string pid = "pid=\"" + std::to_string(job.process.pid()) + "\"";
  const int port = free_port();
  Served served = serve_until(dir, "loopback", "127.0.0.1:" + std::to_string(port), port, {},
                              pid + ",command=\"sleep\",user=\"");
  served.serve->signal(SIGTERM);
  EXPECT_EQ(served.serve->wait(), 0);
  EXPECT_EQ(read_file(dir.file("loopback.err")).find("leave out"), std::string::npos);

  const ProcessResult bad =
      run_gpuscope({"serve", "--simulate", "h100", "--process-series", "some"},
                   {{"GPUSCOPE_SIM_STATE", dir.file("bad.json")}});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--process-series 'some' is not a choice"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("use off"), std::string::npos) << bad.err;
}

// ---------------------------------------------------------------------------------------------
// Planted secrets

const std::vector<std::string> kSecrets = {"env-secret-7f3a", "argv-secret-91cc",
                                           "bearer-secret-2d4e", "basic-password-c0de",
                                           "url-secret-66b1"};

// A push server that refuses every batch and, as a careless proxy might, echoes the request's
// credentials back: 401 with the Authorization header, or 503 naming the password.
class EchoingServer {
 public:
  explicit EchoingServer(int status) {
    server_.Post(".*", [status](const httplib::Request& request, httplib::Response& response) {
      response.status = status;
      response.set_content(
          "you sent " + request.get_header_value("Authorization") + " pw=" + kSecrets[3] + "\n",
          "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~EchoingServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// Everything serve wrote: stderr, stdout, the page, every file under `spill`.
std::string every_output(const TempDir& dir, const std::string& name, const std::string& page,
                         const std::string& spill) {
  std::string all = read_file(dir.file(name + ".err")) + read_file(dir.file(name + ".out")) + page;
  std::size_t files = 0;
  if (!std::filesystem::is_directory(spill)) {
    ADD_FAILURE() << "serve saved nothing in " << spill << ": the check would prove nothing";
    return all;
  }
  for (const auto& entry : std::filesystem::recursive_directory_iterator(spill)) {
    if (entry.is_regular_file()) all += read_file(entry.path().string()), ++files;
  }
  EXPECT_GT(files, 0U) << "serve saved nothing: the spill check would prove nothing";
  return all;
}

void serve_with_planted_secrets(const TempDir& dir, const std::string& name, int status,
                                std::map<std::string, std::string> push_env) {
  ListedProcess job(dir, {"/bin/sh", "-c", "sleep 600; : \"$0\"", "--token=" + kSecrets[1]},
                    {{"SLURM_JOB_ID", "4242"}, {"GPUSCOPE_TEST_TOKEN", kSecrets[0]}});
  ASSERT_NE(read_file("/proc/" + std::to_string(job.process.pid()) + "/cmdline").find(kSecrets[1]),
            std::string::npos);
  EchoingServer push(status);
  const std::string spill = dir.file(name + "-spill");
  const int port = free_port();
  // full: every label serve knows, the most it could reveal.
  Served served =
      serve_until(dir, name, "127.0.0.1:" + std::to_string(port), port,
                  {"--process-series", "full", "--push", push.url(), "--push-spill-dir", spill,
                   "--push-batch-ms", "100", "--push-retry-max-ms", "200"},
                  "pid=\"" + std::to_string(job.process.pid()) + "\",command=\"sh\"", push_env);
  EXPECT_TRUE(eventually([&] {
    return read_file(dir.file(name + ".err")).find("cannot deliver") != std::string::npos;
  })) << read_file(dir.file(name + ".err"));
  served.serve->signal(SIGTERM);
  EXPECT_EQ(served.serve->wait(), 0);
  const std::string all = every_output(dir, name, served.page, spill);
  EXPECT_NE(all.find("they are saved in"), std::string::npos) << all.substr(0, 4000);
  for (const auto& secret : kSecrets) {
    EXPECT_EQ(all.find(secret), std::string::npos) << secret << " in the output of " << name;
  }
}

TEST(ServeReveal, PlantedSecretsAppearInNoOutput) {
  TempDir dir;
  serve_with_planted_secrets(dir, "bearer", 401, {{"GPUSCOPE_PUSH_BEARER_TOKEN", kSecrets[2]}});
  serve_with_planted_secrets(
      dir, "basic", 503, {{"GPUSCOPE_PUSH_USER", "gpu"}, {"GPUSCOPE_PUSH_PASSWORD", kSecrets[3]}});
  // Credentials in the push URL are refused without echoing it.
  const ProcessResult url = run_gpuscope(
      {"serve", "--simulate", "h100", "--push", "http://gpu:" + kSecrets[4] + "@127.0.0.1:9"},
      {{"GPUSCOPE_SIM_STATE", dir.file("url.json")}});
  EXPECT_EQ(url.exit_code, 2) << url.err;
  EXPECT_NE(url.err.find("--push URL holds credentials"), std::string::npos) << url.err;
  EXPECT_EQ((url.err + url.out).find(kSecrets[4]), std::string::npos) << url.err;
}

}  // namespace
}  // namespace gpuscope::testing
