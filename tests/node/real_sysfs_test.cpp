// node: this machine's own /sys, black-box. Where it has RAPL zones, each is read twice and
// either gives a total that does not go back or is said as a problem (non-root: refused);
// where it has none, the test is skipped with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>

#include "node/grace_hwmon.hpp"
#include "node/powercap.hpp"
#include "node/powercap_reader.hpp"

namespace gpuscope::node {
namespace {

TEST(RealSysfs, PowercapDomainsReadOrSayWhyNot) {
  std::error_code error;
  if (!std::filesystem::is_directory("/sys/class/powercap", error)) {
    GTEST_SKIP() << "this machine has no /sys/class/powercap (no RAPL driver, or a container "
                    "without it)";
  }
  const auto found = discover_powercap("/sys");
  if (found.domains.empty()) {
    GTEST_SKIP() << "/sys/class/powercap has no RAPL zone on this machine";
  }
  PowercapReader reader(found.domains);
  const auto first = reader.read();
  const auto second = reader.read();
  const auto problems = reader.take_problems();
  for (std::size_t i = 0; i < found.domains.size(); ++i) {
    const bool read = std::any_of(first.begin(), first.end(),
                                  [&](const DomainEnergy& r) { return r.domain == i; });
    const bool said = std::any_of(problems.begin(), problems.end(),
                                  [&](const DomainProblem& p) { return p.domain == i; });
    // Unread means said, or refused like the one domain the permission message names.
    EXPECT_TRUE(read || said || !reader.active(i)) << found.domains[i].zone;
  }
  for (const auto& reading : second) {
    // Two reads microseconds apart: far less than a megajoule, whatever the machine.
    EXPECT_LT(reading.joules, 1e6) << found.domains[reading.domain].zone;
  }
  for (const auto& problem : problems) {
    EXPECT_FALSE(problem.message.empty());
    std::cout << "  " << found.domains[problem.domain].zone << ": " << problem.message << "\n";
  }
  for (const auto& domain : found.domains) {
    std::cout << "  " << domain.zone << " " << domain.name << " (" << domain_kind_name(domain.kind)
              << ")\n";
  }
}

TEST(RealSysfs, GraceMetersWhereThereAreAny) {
  const auto found = discover_grace_hwmon("/sys");
  if (found.sensors.empty()) GTEST_SKIP() << "this machine has no Grace power meter";
  GracePowerReader reader(found.sensors);
  std::vector<PowerSample> samples;
  reader.read(samples);
  EXPECT_EQ(samples.size() + reader.take_problems().size(), found.sensors.size());
}

}  // namespace
}  // namespace gpuscope::node
