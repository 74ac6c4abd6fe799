// What an Xid means: the number the NVIDIA driver gives an error it logs ("NVRM: Xid
// (PCI:0000:18:00): 79, ...") and NVML reports as an event, turned into words for people: NVIDIA's
// mnemonic and short description, the most likely cause, one plain sentence on what happened and
// one on what to do. The words paraphrase NVIDIA's Xid catalogue
// (https://docs.nvidia.com/deploy/xid-errors/, docs/health.md "Xid errors"); numbers not in it
// are still shown, as "Xid N".
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpuscope {

// The most likely cause of an Xid, by NVIDIA's catalogue: whose fault it is.
enum class XidCause {
  Application,    // the program running on the GPU (a bad address, an illegal instruction)
  Hardware,       // the GPU or its board
  Memory,         // the GPU's memory (ECC errors, remapping): hardware wearing or failing
  Link,           // a link: PCIe, NVLink, or the C2C link to a Grace CPU
  Driver,         // the driver or the GPU's firmware
  Thermal,        // heat
  Informational,  // nothing by itself: it accompanies or summarises another Xid
  Unknown,
};

struct XidInfo {
  unsigned xid;
  std::string_view mnemonic;     // as NVIDIA's catalogue spells it, "ROBUST_CHANNEL_GPU_ECC_DBE"
  std::string_view description;  // NVIDIA's short description, "Double Bit ECC Error"
  XidCause cause;                // the most likely cause
  std::string_view meaning;      // one plain sentence: what happened, likely whose fault
  std::string_view action;       // what the user should do
};

// The catalogue entry of `xid`; nullptr when the catalogue has none.
const XidInfo* xid_info(unsigned xid);

// Every entry, sorted by number (each number once).
std::span<const XidInfo> xid_catalog();

// "Xid 79: GPU has fallen off the bus"; a number the catalogue lacks: "Xid 200". This is the
// detail of an EventKind::Xid event, so every Xid event's detail begins "Xid N".
std::string xid_title(unsigned xid);

// The number at the start of an Xid event's detail: "Xid 79", "Xid 79: ..." or "Xid 79 ..." give
// 79; anything else (no "Xid ", no digits, a number past 32 bits) nullopt.
std::optional<unsigned> xid_from_title(std::string_view detail);

// The cause in a few words for a sentence: "hardware", "the application", ...
std::string_view xid_cause_word(XidCause cause);

}  // namespace gpuscope
