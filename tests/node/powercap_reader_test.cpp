// node/powercap_reader: counters turned into joule totals across wrap-arounds, with the time of
// each read; a domain that vanishes, is refused (EACCES, as non-root meets it since Linux 5.10),
// fails once (EIO) or holds garbage is said once and gives no reading, never a zero.
#include "node/powercap_reader.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "fake_sysfs.hpp"
#include "node/powercap.hpp"

namespace gpuscope::node {
namespace {

using testing::FakeSysfs;
using testing::FaultyReader;

// A two-socket server: package-0, its dram, package-1, its dram (domains 0..3).
void two_sockets(const FakeSysfs& sysfs, unsigned long long max_uj = 262'143'328'850ULL) {
  sysfs.zone("intel-rapl:0", "package-0", 100, max_uj);
  sysfs.zone("intel-rapl:0:0", "dram", 10, max_uj);
  sysfs.zone("intel-rapl:1", "package-1", 200, max_uj);
  sysfs.zone("intel-rapl:1:0", "dram", 20, max_uj);
}

const DomainEnergy* reading_of(const std::vector<DomainEnergy>& readings, std::size_t domain) {
  for (const auto& reading : readings) {
    if (reading.domain == domain) return &reading;
  }
  return nullptr;
}

TEST(PowercapReader, TotalsGrowFromTheFirstReadingWithTheirTimes) {
  FakeSysfs sysfs;
  two_sockets(sysfs);
  PowercapReader reader(discover_powercap(sysfs.root()).domains);
  const auto first = reader.read();
  ASSERT_EQ(first.size(), 4U);
  for (const auto& reading : first) {
    EXPECT_EQ(reading.total_uj, 0U);
    EXPECT_GT(reading.mono_ns, 0);
    EXPECT_GT(reading.wall_ns, 0);
  }
  EXPECT_EQ(first[2].counter_uj, 200U);

  sysfs.energy("intel-rapl:0", 2'500'100);  // +2.5 J
  sysfs.energy("intel-rapl:1:0", 520);
  const auto second = reader.read();
  ASSERT_EQ(second.size(), 4U);
  EXPECT_EQ(second[0].total_uj, 2'500'000U);
  EXPECT_DOUBLE_EQ(second[0].joules, 2.5);
  EXPECT_EQ(second[1].total_uj, 0U);
  EXPECT_EQ(second[3].total_uj, 500U);
  EXPECT_GE(second[0].mono_ns, first[3].mono_ns);
  EXPECT_TRUE(reader.take_problems().empty());
}

// energy_uj falls back to 0 past max_energy_range_uj: the wrap adds (max - previous) + current.
TEST(PowercapReader, CounterThatWrapsKeepsGrowing) {
  FakeSysfs sysfs;
  two_sockets(sysfs, 1000);
  PowercapReader reader(discover_powercap(sysfs.root()).domains);
  reader.read();  // 100: the start
  sysfs.energy("intel-rapl:0", 900);
  EXPECT_EQ(reader.read()[0].total_uj, 800U);
  sysfs.energy("intel-rapl:0", 150);
  auto readings = reader.read();
  EXPECT_EQ(readings[0].total_uj, 800U + 100U + 150U);
  EXPECT_EQ(readings[0].wraps, 1U);
  sysfs.energy("intel-rapl:0", 0);  // a second wrap, landing on 0
  readings = reader.read();
  EXPECT_EQ(readings[0].total_uj, 1050U + 850U);
  EXPECT_EQ(readings[0].wraps, 2U);
  sysfs.energy("intel-rapl:0", 40);
  readings = reader.read();
  EXPECT_EQ(readings[0].total_uj, 1940U);
  EXPECT_EQ(readings[0].wraps, 2U);
  EXPECT_TRUE(reader.take_problems().empty());
}

TEST(PowercapReader, CounterFallingWithoutKnownRangeIsSaidOnceAndLosesOnlyThatInterval) {
  FakeSysfs sysfs;
  sysfs.zone("intel-rapl:0", "package-0", 500);
  std::filesystem::remove(sysfs.powercap() / "intel-rapl:0" / "max_energy_range_uj");
  PowercapReader reader(discover_powercap(sysfs.root()).domains);
  reader.read();
  sysfs.energy("intel-rapl:0", 100);
  EXPECT_EQ(reader.read()[0].total_uj, 0U);
  sysfs.energy("intel-rapl:0", 50);
  EXPECT_EQ(reader.read()[0].total_uj, 0U);
  sysfs.energy("intel-rapl:0", 80);
  EXPECT_EQ(reader.read()[0].total_uj, 30U);
  const auto problems = reader.take_problems();
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].kind, ProblemKind::FellWithoutRange);
}

// A counter above its max_energy_range_uj (here near 2^64, as a hostile or broken sysfs gave) is
// no energy: before the fix a 3 s run reported 5 million kWh. That read gives no reading, said
// once per streak, and the previous good reading stays the base.
TEST(PowercapReader, CounterAboveItsRangeIsRefusedNotAdded) {
  FakeSysfs sysfs;
  two_sockets(sysfs, 1'000'000);
  PowercapReader reader(discover_powercap(sysfs.root()).domains);
  reader.read();                                                // package-0 at 100
  sysfs.energy("intel-rapl:0", 18'000'000'000'000'000'000ULL);  // above the range
  auto readings = reader.read();
  EXPECT_EQ(reading_of(readings, 0), nullptr);
  ASSERT_NE(reading_of(readings, 2), nullptr);  // the others go on
  sysfs.energy("intel-rapl:0", 1'000'001);      // just above, still refused, not said again
  EXPECT_EQ(reading_of(reader.read(), 0), nullptr);
  auto problems = reader.take_problems();
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].kind, ProblemKind::AboveRange);
  EXPECT_NE(problems[0].message.find("max_energy_range_uj of 1000000"), std::string::npos)
      << problems[0].message;
  EXPECT_NE(problems[0].message.find("18000000000000000000"), std::string::npos);

  sysfs.energy("intel-rapl:0", 600);  // within range again: 500 µJ since the last good read
  readings = reader.read();
  ASSERT_NE(reading_of(readings, 0), nullptr);
  EXPECT_EQ(reading_of(readings, 0)->total_uj, 500U);
  EXPECT_EQ(reading_of(readings, 0)->wraps, 0U);
  EXPECT_TRUE(reader.take_problems().empty());

  // The first reading itself above the range is refused too: no base from it.
  FakeSysfs other;
  other.zone("intel-rapl:0", "package-0", 5'000'000, 1'000'000);
  PowercapReader fresh(discover_powercap(other.root()).domains);
  EXPECT_TRUE(fresh.read().empty());
  other.energy("intel-rapl:0", 10);
  ASSERT_EQ(fresh.read().size(), 1U);
  other.energy("intel-rapl:0", 30);
  EXPECT_EQ(fresh.read()[0].total_uj, 20U);
  EXPECT_EQ(fresh.take_problems().size(), 1U);
}

// A zone removed mid-run (the driver unloaded): said once, no reading, the others go on.
TEST(PowercapReader, DomainThatDisappearsIsSaidOnceAndNeverReadAsZero) {
  FakeSysfs sysfs;
  two_sockets(sysfs);
  PowercapReader reader(discover_powercap(sysfs.root()).domains);
  reader.read();
  std::filesystem::remove_all(sysfs.powercap() / "intel-rapl:1:0");
  sysfs.energy("intel-rapl:0", 300);

  const auto readings = reader.read();
  ASSERT_EQ(readings.size(), 3U);
  EXPECT_EQ(reading_of(readings, 3), nullptr);
  EXPECT_EQ(reading_of(readings, 0)->total_uj, 200U);
  auto problems = reader.take_problems();
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].domain, 3U);
  EXPECT_EQ(problems[0].kind, ProblemKind::Vanished);
  EXPECT_NE(problems[0].message.find("intel-rapl:1:0"), std::string::npos) << problems[0].message;
  EXPECT_FALSE(reader.active(3));

  EXPECT_EQ(reader.read().size(), 3U);
  EXPECT_TRUE(reader.take_problems().empty());
}

// Non-root on Linux >= 5.10: every energy_uj refused. One message for the node, with the
// remedy; no reading at all.
TEST(PowercapReader, PermissionDeniedIsOneMessageWithWhatToDo) {
  FakeSysfs sysfs;
  two_sockets(sysfs);
  const auto domains = discover_powercap(sysfs.root()).domains;
  FaultyReader faults;
  for (const auto& domain : domains) faults.fail(domain.energy_file.string(), EACCES);
  PowercapReader reader(domains, faults.reader());

  EXPECT_TRUE(reader.read().empty());
  EXPECT_TRUE(reader.read().empty());
  const auto problems = reader.take_problems();
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].kind, ProblemKind::PermissionDenied);
  const std::string& message = problems[0].message;
  EXPECT_NE(message.find("root"), std::string::npos) << message;
  EXPECT_NE(message.find("udev"), std::string::npos) << message;
  EXPECT_NE(message.find("CVE-2020-8694"), std::string::npos) << message;
  EXPECT_NE(message.find(domains[0].energy_file.string()), std::string::npos) << message;
  for (std::size_t i = 0; i < domains.size(); ++i) EXPECT_FALSE(reader.active(i));
  EXPECT_EQ(message, permission_message(domains[0]));
}

// A read that fails with EIO for a while: said once for the streak, no reading meanwhile, and
// the energy of the gap counted when it reads again (the counter ran on).
TEST(PowercapReader, TransientFailureIsSaidOnceAndTheGapIsCountedAfter) {
  FakeSysfs sysfs;
  two_sockets(sysfs);
  const auto domains = discover_powercap(sysfs.root()).domains;
  FaultyReader faults;
  PowercapReader reader(domains, faults.reader());
  reader.read();
  faults.fail(domains[2].energy_file.string(), EIO);
  sysfs.energy("intel-rapl:1", 700);
  EXPECT_EQ(reading_of(reader.read(), 2), nullptr);
  EXPECT_EQ(reading_of(reader.read(), 2), nullptr);
  auto problems = reader.take_problems();
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].kind, ProblemKind::Unreadable);
  EXPECT_NE(problems[0].message.find(std::strerror(EIO)), std::string::npos);

  faults.heal(domains[2].energy_file.string());
  const auto readings = reader.read();
  ASSERT_NE(reading_of(readings, 2), nullptr);
  EXPECT_EQ(reading_of(readings, 2)->total_uj, 500U);
  EXPECT_TRUE(reader.active(2));
  faults.fail(domains[2].energy_file.string(), EIO);  // a new streak is said again
  reader.read();
  EXPECT_EQ(reader.take_problems().size(), 1U);
}

TEST(PowercapReader, GarbageInTheCounterIsMalformed) {
  FakeSysfs sysfs;
  sysfs.zone("intel-rapl:0", "package-0", 5);
  PowercapReader reader(discover_powercap(sysfs.root()).domains);
  sysfs.write("class/powercap/intel-rapl:0/energy_uj", "-12\n");
  EXPECT_TRUE(reader.read().empty());
  const auto problems = reader.take_problems();
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].kind, ProblemKind::Malformed);
  EXPECT_NE(problems[0].message.find("-12"), std::string::npos) << problems[0].message;
}

}  // namespace
}  // namespace gpuscope::node
