#include "app/guard/health_check_run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "collect/node_gpus.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "guard/node_check.hpp"
#include "guard/notice_text.hpp"
#include "launch/capture.hpp"
#include "util/environment.hpp"

namespace gpuscope::app {
namespace {

std::string from_environment(const char* variable, const std::string& fallback) {
  const std::string given = util::environment_or_empty(variable);
  return given.empty() ? fallback : given;
}

std::string node_name(const HealthCheckOptions& o) {
  if (!o.node.empty()) return o.node;
  const std::string slurm = util::environment_or_empty("SLURMD_NODENAME");
  if (!slurm.empty()) return slurm;
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "localhost";
  const std::string host(buffer);
  return host.substr(0, host.find('.'));
}

bool program_found(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const std::string path = util::environment_or_empty("PATH");
  std::size_t begin = 0;
  while (begin <= path.size()) {
    std::size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(begin, end - begin);
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    begin = end + 1;
  }
  return false;
}

// dcgmi diag -r LEVEL -j; its findings join the check's. False when it could not be run.
bool run_diag(const HealthCheckOptions& o, int level, guard::NodeCheck& check,
              std::string& problem) {
  if (!program_found(o.dcgmi)) {
    check.findings.push_back({guard::Severity::Warning, "",
                              "DCGM's diagnostic was asked for, but dcgmi is not installed"});
    return true;
  }
  // Level 1 takes seconds, 2 about two minutes, 3 and 4 up to hours (DCGM's documentation).
  const std::chrono::seconds limit(level <= 1 ? 120 : level == 2 ? 900 : 14'400);
  const launch::Captured out =
      launch::capture(o.dcgmi, {"diag", "-r", std::to_string(level), "-j"}, limit,
                      "install DCGM (datacenter-gpu-manager) or leave dcgm_diag out of the rules");
  if (out.timed_out) {
    problem = fmt::format("dcgmi diag -r {} took more than {} s", level, limit.count());
    return false;
  }
  try {
    const guard::DiagRead read = guard::read_dcgm_diag(out.out);
    check.findings.insert(check.findings.end(), read.findings.begin(), read.findings.end());
  } catch (const Error& e) {
    problem = fmt::format("{} (dcgmi exited {})", e.what(), out.exit_code);
    return false;
  }
  return true;
}

bool drain_node(const HealthCheckOptions& o, const std::string& node, const std::string& reason,
                std::string& problem) {
  const launch::Captured out = launch::capture(
      o.scontrol, {"update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason},
      std::chrono::seconds(30), "--drain runs scontrol as root on the node (HealthCheckProgram)");
  if (out.exit_code == 0 && !out.timed_out) return true;
  problem = fmt::format("scontrol update NodeName={} State=DRAIN exited {}: {}", node,
                        out.exit_code, guard::clean_value(out.err));
  return false;
}

const char* severity_word(guard::Severity s) {
  return s == guard::Severity::Failure ? "failure" : "warning";
}

void print(const HealthCheckOptions& o, const std::string& node, const guard::NodeCheck& check,
           const std::string& not_made, bool drained, std::int64_t elapsed_ms) {
  if (o.json) {
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : check.findings) {
      findings.push_back(
          {{"severity", severity_word(f.severity)}, {"gpu", f.gpu}, {"text", f.text}});
    }
    const nlohmann::json doc = {{"node", node},
                                {"healthy", check.healthy() && not_made.empty()},
                                {"checked", not_made.empty()},
                                {"gpus", check.gpus},
                                {"reason", not_made.empty() ? check.reason() : not_made},
                                {"findings", findings},
                                {"drained", drained},
                                {"elapsed_ms", elapsed_ms}};
    fmt::print("{}\n", json_text(doc, 2));
    return;
  }
  if (!not_made.empty()) {
    fmt::print("gpuscope health-check: node {}: the check could not be made: {}\n", node, not_made);
  } else if (check.healthy()) {
    fmt::print("gpuscope health-check: node {}: {} GPUs, healthy\n", node, check.gpus);
  } else {
    fmt::print("gpuscope health-check: node {} unhealthy: {}{}\n", node, check.reason(),
               drained ? " (drained)" : "");
  }
  for (const auto& f : check.findings) {
    fmt::print("  {}: {}{}\n", severity_word(f.severity), f.gpu.empty() ? "" : f.gpu + ": ",
               f.text);
  }
}

}  // namespace

int run_health_check(HealthCheckOptions o) {
  const auto start = std::chrono::steady_clock::now();
  o.dcgmi = from_environment("GPUSCOPE_DCGMI", o.dcgmi);
  o.scontrol = from_environment("GPUSCOPE_SCONTROL", o.scontrol);
  const guard::HealthRule rule =
      o.rules.empty() ? guard::HealthRule{} : guard::read_rules(o.rules).health;
  const std::string node = node_name(o);
  guard::NodeCheck check;
  try {
    check = guard::check_gpus(rule, collect::describe_node(o.backend, "all"), o.expect_gpus);
  } catch (const Error& e) {
    // No GPU library or none that answers: a failure where GPUs are expected, else no GPU here.
    if (o.expect_gpus.value_or(0) > 0) {
      check.findings.push_back(
          {guard::Severity::Failure, "", fmt::format("the GPUs cannot be listed: {}", e.what())});
    }
  }
  std::string not_made;
  const int level = o.dcgm_diag.value_or(rule.dcgm_diag_level);
  if (level > 0) run_diag(o, level, check, not_made);
  bool drained = false;
  std::string drain_problem;
  if (o.drain && not_made.empty() && !check.healthy()) {
    drained = drain_node(o, node, check.reason(), drain_problem);
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  print(o, node, check, not_made, drained, elapsed.count());
  if (!drain_problem.empty()) fmt::print(stderr, "gpuscope health-check: {}\n", drain_problem);
  if (!not_made.empty()) return kCheckNotMade;
  return check.healthy() ? 0 : kCheckUnhealthy;
}

}  // namespace gpuscope::app
