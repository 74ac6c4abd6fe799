// libFuzzer target: what gpuscope guard and health-check read from outside, chosen by the first
// byte: 0 squeue --json (guard/running_jobs), 1 sinfo's node lines (guard/slurm_nodes), 2 dcgmi
// diag's JSON (guard/node_check), 3 a rules document as JSON (guard/rules, the checks after the
// YAML library). No reader throws anything but gpuscope::Error; what they return holds together:
// every running job has an id, GPUs and nodes; unreadable records and lines are counted and at
// most five quoted; every node once, with a partition; a diagnostic has results and no more
// findings than results; rules have their steps in order and their shares in range.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "guard/node_check.hpp"
#include "guard/rules.hpp"
#include "guard/running_jobs.hpp"
#include "guard/slurm_nodes.hpp"

using gpuscope::fuzz::require;
namespace guard = gpuscope::guard;

namespace {

void squeue(std::string_view text) {
  const guard::SqueueRead read = guard::read_squeue_json(text);
  require(read.unreadable.size() == std::min<std::size_t>(read.unreadable_count, 5));
  for (const auto& job : read.jobs) {
    require(!job.id.empty() && !job.shown_id.empty());
    require(job.gpus > 0);
    require(!job.nodes.empty());
  }
}

void sinfo(std::string_view text) {
  const guard::SinfoRead read = guard::read_sinfo(text);
  require(read.unreadable.size() == std::min<std::size_t>(read.unreadable_count, 5));
  std::set<std::string> names;
  for (const auto& node : read.nodes) {
    require(names.insert(node.name).second);
    require(!node.partitions.empty());
  }
}

void diag(std::string_view text) {
  const guard::DiagRead read = guard::read_dcgm_diag(text);
  require(read.results > 0);
  require(read.findings.size() <= read.results);
  for (const auto& f : read.findings) require(f.text.size() <= 220);
}

void rules(std::string_view text) {
  gpuscope::YamlDocument doc;
  doc.name = "fuzz.yaml";
  doc.value = nlohmann::json::parse(text, nullptr, false);
  if (doc.value.is_discarded()) return;
  const guard::Rules r = guard::parse_rules(doc);
  const auto& s = r.idle.steps;
  if (s.first_warning_s && s.cancel_s) require(*s.first_warning_s <= *s.cancel_s);
  require(r.idle.gpu_share >= 0 && r.idle.gpu_share <= 1);
  require(r.health.max_drained_share >= 0 && r.health.max_drained_share <= 1);
  require(r.interval_s >= 1 && r.sample_interval_s >= 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0:
        squeue(text);
        break;
      case 1:
        sinfo(text);
        break;
      case 2:
        diag(text);
        break;
      default:
        rules(text);
        break;
    }
  } catch (const gpuscope::Error&) {
    // a clear refusal is a right answer
  }
  return 0;
}
