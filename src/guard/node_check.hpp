// gpuscope health-check's verdict on the node's GPUs (docs/guard.md, "health-check"): from the
// GPUs as the one GPU interface describes them now (identity and health counters, NVIDIA and
// AMD alike) and, where asked, DCGM's diagnostic. Pure: the same inputs give the same verdict.
//
// A failure makes the node unhealthy (Slurm drains it): a GPU missing (fewer than expected) or
// that cannot be opened (lost), uncorrected ECC errors since the driver loaded, a failed row
// remap, a row remap waiting for a reset when the rules say so, a DCGM diagnostic's failure.
// A warning is said and the node stays healthy: a pending remap (by default), a page retirement
// waiting for a reboot, ECC off, a DCGM diagnostic's warning.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_description.hpp"
#include "guard/rules.hpp"

namespace gpuscope::guard {

enum class Severity { Warning, Failure };

struct CheckFinding {
  Severity severity = Severity::Failure;
  std::string gpu;  // "GPU 1 (GPU-8b1f...)", "" for the node
  std::string text;
};

struct NodeCheck {
  std::size_t gpus = 0;  // whole GPUs found (MIG devices are their GPU's)
  std::vector<CheckFinding> findings;

  bool healthy() const;
  // The first failure as Slurm's drain reason: "gpuscope: GPU 1 (GPU-...): 3 uncorrected ECC
  // errors since the driver loaded", at most 200 characters, no control characters; "" when
  // healthy.
  std::string reason() const;
};

// The verdict on `system`'s GPUs. `expect_gpus`: how many whole GPUs the node must have.
NodeCheck check_gpus(const HealthRule& rule, const SystemDescription& system,
                     std::optional<std::size_t> expect_gpus);

// What `dcgmi diag -r N -j` said: DCGM 3's {"DCGM GPU Diagnostic": {"test_categories": [...]}}
// with gpu_ids and warnings as words, and DCGM 4's {"DCGM Diagnostic": ...} with entity ids and
// warnings as objects; statuses in either case (PASS, Pass, Fail, Warn, Skip, Not Run).
struct DiagRead {
  std::string version;  // DCGM's, where it says
  std::size_t results = 0;
  std::vector<CheckFinding> findings;  // a test's failure or warning per GPU
};

// Throws Error when `text` holds no diagnostic (no JSON, another document, no result at all, or
// DCGM's runtime_error): the check could not be made, which is not a verdict on the GPUs.
DiagRead read_dcgm_diag(std::string_view text);

}  // namespace gpuscope::guard
