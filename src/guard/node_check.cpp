#include "guard/node_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "guard/notice_text.hpp"

namespace gpuscope::guard {
namespace {

// The node's GPU index (an AMD GPU's follows the NVIDIA ones': docs/amd.md) and its UUID.
std::string gpu_name(const DeviceDescription& d) {
  return d.uuid ? fmt::format("GPU {} ({})", d.index, *d.uuid) : fmt::format("GPU {}", d.index);
}

bool flag_raised(const HealthRow& row, HealthMetric m) {
  const auto v = row.get(m);
  return v && *v > 0.5;
}

void check_counters(const HealthRule& rule, const DeviceDescription& d,
                    std::vector<CheckFinding>& out) {
  const HealthRow& row = *d.health;
  const std::string gpu = gpu_name(d);
  const auto fail = [&](bool failure, std::string text) {
    out.push_back({failure ? Severity::Failure : Severity::Warning, gpu, std::move(text)});
  };
  if (const auto ecc = row.get(HealthMetric::EccUncorrectedVolatile); ecc && *ecc > 0.5) {
    fail(rule.uncorrected_ecc, fmt::format("{:.0f} uncorrected ECC error{} since the driver loaded",
                                           *ecc, *ecc >= 1.5 ? "s" : ""));
  }
  if (flag_raised(row, HealthMetric::RowRemapFailure)) {
    fail(rule.row_remap_failure, "a row remap failed: no spare row was left");
  }
  if (flag_raised(row, HealthMetric::RowRemapPending)) {
    fail(rule.row_remap_pending, "a row remap waits for the GPU's reset");
  }
  if (flag_raised(row, HealthMetric::RetiredPagesPending)) {
    fail(false, "a page retirement waits for the next reboot");
  }
  if (const auto ecc_on = row.get(HealthMetric::EccEnabled); ecc_on && *ecc_on < 0.5) {
    fail(false, "ECC is off");
  }
}

}  // namespace

bool NodeCheck::healthy() const {
  return std::none_of(findings.begin(), findings.end(),
                      [](const CheckFinding& f) { return f.severity == Severity::Failure; });
}

std::string NodeCheck::reason() const {
  for (const auto& f : findings) {
    if (f.severity != Severity::Failure) continue;
    return clean_value("gpuscope: " + (f.gpu.empty() ? f.text : f.gpu + ": " + f.text));
  }
  return {};
}

NodeCheck check_gpus(const HealthRule& rule, const SystemDescription& system,
                     std::optional<std::size_t> expect_gpus) {
  NodeCheck check;
  std::vector<const DeviceDescription*> gpus;  // NVIDIA's, then AMD's
  for (const auto& d : system.devices) gpus.push_back(&d);
  if (system.amd) {
    for (const auto& d : system.amd->devices) gpus.push_back(&d);
  }
  for (const DeviceDescription* d : gpus) {
    if (d->mig) continue;  // a MIG device's health is its GPU's
    ++check.gpus;
    if (d->error) {
      check.findings.push_back({rule.lost_gpu ? Severity::Failure : Severity::Warning, gpu_name(*d),
                                "cannot be opened: " + clean_value(*d->error)});
      continue;
    }
    if (d->health) check_counters(rule, *d, check.findings);
  }
  if (expect_gpus && check.gpus < *expect_gpus) {
    check.findings.insert(
        check.findings.begin(),
        {Severity::Failure, "",
         fmt::format("{} of the {} GPUs expected were found", check.gpus, *expect_gpus)});
  }
  return check;
}

}  // namespace gpuscope::guard
