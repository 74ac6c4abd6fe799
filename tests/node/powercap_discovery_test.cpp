// node/powercap: RAPL zones found in made-up /sys trees: a two-socket server with DRAM, a
// client with core, uncore and psys but no DRAM, MMIO zones that mirror the MSR ones, a
// TPMI-only machine, zones without names, and trees with no powercap at all.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "fake_sysfs.hpp"
#include "node/powercap.hpp"

namespace gpuscope::node {
namespace {

using testing::FakeSysfs;

const PowercapDomain& by_zone(const PowercapDiscovery& found, const std::string& zone) {
  const auto it = std::find_if(found.domains.begin(), found.domains.end(),
                               [&](const PowercapDomain& d) { return d.zone == zone; });
  if (it == found.domains.end()) throw std::runtime_error("no zone " + zone);
  return *it;
}

bool noted(const PowercapDiscovery& found, const std::string& words) {
  return std::any_of(found.notes.begin(), found.notes.end(), [&](const std::string& note) {
    return note.find(words) != std::string::npos;
  });
}

// Two sockets, each a package with a DRAM subzone, as a Xeon server's kernel shows them; the
// control type's own folder ("intel-rapl", no colon) is not a zone.
TEST(PowercapDiscovery, TwoSocketServerWithDram) {
  FakeSysfs sysfs;
  sysfs.write("class/powercap/intel-rapl/enabled", "1\n");
  sysfs.zone("intel-rapl:0", "package-0", 1000);
  sysfs.zone("intel-rapl:0:0", "dram", 200, 65712999613ULL);
  sysfs.zone("intel-rapl:1", "package-1", 3000);
  sysfs.zone("intel-rapl:1:0", "dram", 400, 65712999613ULL);

  const auto found = discover_powercap(sysfs.root());
  ASSERT_EQ(found.domains.size(), 4U);
  EXPECT_EQ(found.domains[0].zone, "intel-rapl:0");
  EXPECT_EQ(found.domains[1].zone, "intel-rapl:0:0");
  EXPECT_EQ(found.domains[2].zone, "intel-rapl:1");
  EXPECT_EQ(found.domains[3].zone, "intel-rapl:1:0");

  const auto& package1 = by_zone(found, "intel-rapl:1");
  EXPECT_EQ(package1.kind, DomainKind::Package);
  EXPECT_EQ(package1.name, "package-1");
  EXPECT_EQ(package1.interface, "intel-rapl");
  EXPECT_EQ(package1.socket, 1U);
  EXPECT_FALSE(package1.parent);
  EXPECT_EQ(package1.max_energy_range_uj, 262143328850ULL);
  EXPECT_EQ(package1.energy_file, sysfs.powercap() / "intel-rapl:1" / "energy_uj");
  EXPECT_TRUE(package1.additive);

  const auto& dram1 = by_zone(found, "intel-rapl:1:0");
  EXPECT_EQ(dram1.kind, DomainKind::Dram);
  EXPECT_EQ(dram1.socket, 1U);  // its package's
  EXPECT_EQ(dram1.parent, "intel-rapl:1");
  EXPECT_EQ(dram1.max_energy_range_uj, 65712999613ULL);
  EXPECT_TRUE(dram1.additive);  // DRAM is not inside the package's energy
  EXPECT_TRUE(found.notes.empty());
}

// A client part: core and uncore inside the package, psys a zone of its own, no DRAM.
TEST(PowercapDiscovery, ClientWithoutDramKeepsPartsOutOfTheTotal) {
  FakeSysfs sysfs;
  sysfs.zone("intel-rapl:0", "package-0", 10);
  sysfs.zone("intel-rapl:0:0", "core", 5);
  sysfs.zone("intel-rapl:0:1", "uncore", 1);
  sysfs.zone("intel-rapl:1", "psys", 50);

  const auto found = discover_powercap(sysfs.root());
  ASSERT_EQ(found.domains.size(), 4U);
  EXPECT_TRUE(std::none_of(found.domains.begin(), found.domains.end(),
                           [](const PowercapDomain& d) { return d.kind == DomainKind::Dram; }));
  EXPECT_EQ(by_zone(found, "intel-rapl:0:0").kind, DomainKind::Core);
  EXPECT_FALSE(by_zone(found, "intel-rapl:0:0").additive);
  EXPECT_EQ(by_zone(found, "intel-rapl:0:0").socket, 0U);
  EXPECT_EQ(by_zone(found, "intel-rapl:0:1").kind, DomainKind::Uncore);
  EXPECT_FALSE(by_zone(found, "intel-rapl:0:1").additive);
  const auto& psys = by_zone(found, "intel-rapl:1");
  EXPECT_EQ(psys.kind, DomainKind::Psys);
  EXPECT_FALSE(psys.socket);
  EXPECT_FALSE(psys.additive);  // it contains the package
  EXPECT_TRUE(by_zone(found, "intel-rapl:0").additive);
}

// Zones numbered past 9 sort by number, and a package's dies are each a package of the socket.
TEST(PowercapDiscovery, NumbersSortAsNumbersAndDiesKeepTheirSocket) {
  FakeSysfs sysfs;
  for (int i = 0; i < 12; ++i) {
    sysfs.zone("intel-rapl:" + std::to_string(i),
               "package-" + std::to_string(i / 2) + "-die-" + std::to_string(i % 2), 1);
  }
  const auto found = discover_powercap(sysfs.root());
  ASSERT_EQ(found.domains.size(), 12U);
  EXPECT_EQ(found.domains[2].zone, "intel-rapl:2");
  EXPECT_EQ(found.domains[10].zone, "intel-rapl:10");
  EXPECT_EQ(found.domains[11].socket, 5U);
  EXPECT_EQ(found.domains[11].kind, DomainKind::Package);
}

// MMIO zones read the package counter the MSR zones already read: left out, with a note.
TEST(PowercapDiscovery, MmioMirrorOfTheMsrPackageIsLeftOut) {
  FakeSysfs sysfs;
  sysfs.zone("intel-rapl:0", "package-0", 10);
  sysfs.zone("intel-rapl:0:0", "dram", 3);
  sysfs.zone("intel-rapl-mmio:0", "package-0", 10);
  sysfs.zone("intel-rapl-mmio:0:0", "dram", 3);

  const auto found = discover_powercap(sysfs.root());
  ASSERT_EQ(found.domains.size(), 2U);
  EXPECT_EQ(found.domains[0].zone, "intel-rapl:0");
  EXPECT_EQ(found.domains[1].zone, "intel-rapl:0:0");
  EXPECT_TRUE(noted(found, "intel-rapl-mmio:0 (package-0) mirrors"));
  EXPECT_TRUE(noted(found, "intel-rapl-mmio:0:0 (dram) mirrors"));
}

// A machine whose only RAPL interface is TPMI keeps its zones.
TEST(PowercapDiscovery, SecondInterfaceAloneIsKept) {
  FakeSysfs sysfs;
  sysfs.zone("intel-rapl-tpmi:0", "package-0", 10);
  sysfs.zone("intel-rapl-tpmi:1", "package-1", 10);
  const auto found = discover_powercap(sysfs.root());
  ASSERT_EQ(found.domains.size(), 2U);
  EXPECT_EQ(found.domains[1].interface, "intel-rapl-tpmi");
  EXPECT_EQ(found.domains[1].socket, 1U);
  EXPECT_TRUE(found.domains[1].additive);
}

TEST(PowercapDiscovery, ZoneWithoutNameIsNotedAndBadRangeIsUnknown) {
  FakeSysfs sysfs;
  sysfs.zone("intel-rapl:0", "package-0", 10);
  sysfs.write("class/powercap/intel-rapl:0/max_energy_range_uj", "lots\n");
  sysfs.write("class/powercap/intel-rapl:1/energy_uj", "5\n");
  sysfs.write("class/powercap/intel-rapl:x/name", "package-9\n");  // not a zone name

  const auto found = discover_powercap(sysfs.root());
  ASSERT_EQ(found.domains.size(), 1U);
  EXPECT_FALSE(found.domains[0].max_energy_range_uj);
  EXPECT_TRUE(noted(found, "intel-rapl:1 has no readable name"));
}

TEST(PowercapDiscovery, NoPowercapFolderIsANoteNotAnError) {
  FakeSysfs sysfs;
  sysfs.write("class/hwmon/.keep", "");
  const auto found = discover_powercap(sysfs.root());
  EXPECT_TRUE(found.domains.empty());
  EXPECT_TRUE(noted(found, "no RAPL energy"));
}

TEST(PowercapDiscovery, SysfsRootThatIsNoFolderIsAnError) {
  FakeSysfs sysfs;
  try {
    discover_powercap(sysfs.root() / "absent");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("absent"), std::string::npos) << error.what();
    EXPECT_NE(error.hint().find("/sys"), std::string::npos);
  }
}

TEST(PowercapDiscovery, KindNames) {
  EXPECT_STREQ(domain_kind_name(DomainKind::Package), "package");
  EXPECT_STREQ(domain_kind_name(DomainKind::Dram), "dram");
  EXPECT_STREQ(domain_kind_name(DomainKind::Psys), "psys");
  EXPECT_STREQ(domain_kind_name(DomainKind::Other), "other");
}

}  // namespace
}  // namespace gpuscope::node
