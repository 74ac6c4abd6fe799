// The Xid catalogue (core/xid_catalog): numbers to words, titles and back, causes.
#include "core/xid_catalog.hpp"

#include <gtest/gtest.h>

#include <set>

namespace gpuscope {
namespace {

TEST(XidCatalogTest, KnownNumbersHaveNvidiasWords) {
  const XidInfo* bus = xid_info(79);
  ASSERT_NE(bus, nullptr);
  EXPECT_EQ(bus->xid, 79u);
  EXPECT_EQ(bus->mnemonic, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS");
  EXPECT_EQ(bus->description, "GPU has fallen off the bus");
  EXPECT_EQ(bus->cause, XidCause::Hardware);
  EXPECT_EQ(xid_title(79), "Xid 79: GPU has fallen off the bus");
  EXPECT_EQ(xid_info(48)->cause, XidCause::Memory);
  EXPECT_EQ(xid_info(13)->cause, XidCause::Application);
  EXPECT_EQ(xid_info(31)->cause, XidCause::Application);
  EXPECT_EQ(xid_info(74)->cause, XidCause::Link);
  EXPECT_EQ(xid_info(154)->cause, XidCause::Informational);
  EXPECT_EQ(xid_title(48), "Xid 48: Double Bit ECC Error");
}

TEST(XidCatalogTest, UnknownNumbersAreStillShown) {
  for (unsigned xid : {0u, 1u, 8u, 200u, 999u, 4294967295u}) {
    EXPECT_EQ(xid_info(xid), nullptr) << xid;
    EXPECT_EQ(xid_title(xid), "Xid " + std::to_string(xid));
  }
}

// The Xids the catalog must know: those an operator of datacenter GPUs meets (application faults,
// memory, links, firmware) and the NVLink 5 ones of B100/GB200.
TEST(XidCatalogTest, CoversTheXidsOfTheIssue) {
  std::set<unsigned> wanted = {13,  31,  32,  38,  43,  45,  46,  48,  56,  57,  58,  61,
                               62,  63,  64,  68,  69,  74,  79,  92,  94,  95,  109, 119,
                               120, 121, 123, 140, 143, 154, 155, 156, 157, 158, 171, 172};
  for (unsigned xid = 144; xid <= 150; ++xid) wanted.insert(xid);
  for (unsigned xid : wanted) EXPECT_NE(xid_info(xid), nullptr) << "Xid " << xid;
}

TEST(XidCatalogTest, EveryEntryIsCompleteAndTheNumbersAreSortedAndUnique) {
  const auto catalog = xid_catalog();
  ASSERT_FALSE(catalog.empty());
  unsigned previous = 0;
  for (const XidInfo& info : catalog) {
    EXPECT_GT(info.xid, previous) << "Xid " << info.xid << " out of order or repeated";
    previous = info.xid;
    EXPECT_FALSE(info.mnemonic.empty()) << info.xid;
    EXPECT_FALSE(info.description.empty()) << info.xid;
    EXPECT_FALSE(info.meaning.empty()) << info.xid;
    EXPECT_FALSE(info.action.empty()) << info.xid;
    EXPECT_NE(info.cause, XidCause::Unknown) << info.xid;
    // Sentences end as sentences; mnemonics are NVIDIA's upper-case identifiers.
    EXPECT_EQ(info.meaning.back(), '.') << info.xid;
    EXPECT_EQ(info.action.back(), '.') << info.xid;
    for (char c : info.mnemonic) {
      EXPECT_TRUE((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') << info.mnemonic;
    }
    EXPECT_EQ(xid_info(info.xid), &info);
  }
}

TEST(XidCatalogTest, TheNumberComesBackFromTheTitle) {
  for (const XidInfo& info : xid_catalog()) {
    EXPECT_EQ(xid_from_title(xid_title(info.xid)), info.xid);
  }
  EXPECT_EQ(xid_from_title("Xid 200"), 200u);
  EXPECT_EQ(xid_from_title("Xid 79 (PCI:0000:18:00)"), 79u);
  EXPECT_EQ(xid_from_title("Xid 4294967295"), 4294967295u);
  for (const char* bad : {"", "Xid", "Xid ", "Xid x", "Xid -1", "Xid +5", "xid 79", "Xid 79x",
                          " Xid 79", "Xid 4294967296", "ECC: 3 errors"}) {
    EXPECT_FALSE(xid_from_title(bad)) << bad;
  }
}

TEST(XidCatalogTest, EveryCauseHasItsOwnWords) {
  std::set<std::string_view> words;
  for (XidCause cause :
       {XidCause::Application, XidCause::Hardware, XidCause::Memory, XidCause::Link,
        XidCause::Driver, XidCause::Thermal, XidCause::Informational, XidCause::Unknown}) {
    const std::string_view word = xid_cause_word(cause);
    EXPECT_FALSE(word.empty());
    EXPECT_TRUE(words.insert(word).second) << word;
  }
  EXPECT_EQ(xid_cause_word(XidCause::Hardware), "hardware");
  EXPECT_EQ(xid_cause_word(XidCause::Application), "the application");
}

}  // namespace
}  // namespace gpuscope
