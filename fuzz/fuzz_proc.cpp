// libFuzzer target: what gpuscope reads about other people's processes and from its own
// environment, none of which it controls: /proc/PID/cgroup text, an environ block read as a
// launcher's rank context, and the default output name made from it. None of these may throw
// (bad input is an absent field), a container id is always hexadecimal, and no environment can
// make the default output name leave the working directory. The first byte picks the parser.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_file.hpp"
#include "processes/cgroup.hpp"
#include "processes/process_identity.hpp"
#include "ranks/output_path.hpp"
#include "ranks/rank_context.hpp"

using gpuscope::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    const auto identity = processes::parse_proc_cgroup(text);
    if (identity.container_id) {
      require(identity.container_id->size() >= 12);
      require(identity.container_id->find_first_not_of("0123456789abcdefABCDEF") ==
              std::string::npos);
    }
    return 0;
  }
  const auto env = processes::environment_from_block(text);
  ranks::OutputNaming naming;
  naming.host = "node1";
  naming.timestamp = "20261125-000000";
  naming.slurm = ranks::read_slurm_context(env);
  naming.ranks = ranks::read_rank_context(env);
  if (naming.ranks.rank) require(*naming.ranks.rank >= 0);
  if (naming.slurm.node_name) naming.host = *naming.slurm.node_name;  // as profile names the host
  const auto path = ranks::expand_output_path("", naming);
  int parts = 0;
  for (const auto& part : path) {
    require(part != ".." && part != "/" && part != ".");
    ++parts;
  }
  require(parts >= 1 && parts <= 2);
  return 0;
}
