#include "core/xid_catalog.hpp"

#include <array>
#include <charconv>

namespace gpuscope {
namespace {

// NVIDIA's Xid catalogue (https://docs.nvidia.com/deploy/xid-errors/): the Ampere-and-newer
// catalogue's mnemonics, descriptions and actions; for the Xids it lists as unused since Ampere
// (56-58, 61, 123), the older Xid table's descriptions and causes. Meaning and action are
// gpuscope's own words. Sorted by number.
// clang-format off
constexpr std::array kCatalog = {
  XidInfo{13, "ROBUST_CHANNEL_GR_EXCEPTION", "Graphics Engine Exception", XidCause::Application,
          "The GPU's compute engine faulted in the running program, most often an out-of-bounds access or an illegal instruction; rarely the driver or the hardware.",
          "Fix the program: run it under compute-sanitizer or cuda-gdb; if it repeats on the same GPU with a known-good program, tell the admins."},
  XidInfo{31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", XidCause::Application,
          "The program used a GPU address it may not use and the GPU's memory management unit faulted; usually a bug in the program, sometimes the driver or the hardware.",
          "Debug the program with compute-sanitizer memcheck or cuda-gdb; if faults keep hitting this GPU whatever runs on it, tell the admins."},
  XidInfo{32, "ROBUST_CHANNEL_PBDMA_ERROR", "Invalid or corrupted push buffer stream", XidCause::Link,
          "The command stream the driver sends the GPU over PCIe arrived corrupted; this points at the PCIe link's signal quality, not at the program.",
          "Restart the job; if it comes back on this GPU, ask the admins to check its PCIe link."},
  XidInfo{38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", "Driver firmware error", XidCause::Driver,
          "A firmware watchdog in the GPU's graphics engine timed out: a driver or firmware problem.",
          "Usually nothing; if it repeats, the admins should update the driver or report it to NVIDIA."},
  XidInfo{43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", XidCause::Application,
          "The program hit a software fault on the GPU and was stopped; the GPU itself stays healthy.",
          "Look at the program's own error; the GPU needs nothing."},
  XidInfo{45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors", XidCause::Informational,
          "The driver tore down a program's work on the GPU because the program ended (Ctrl-C, a kill, a GPU reset) or because of an earlier error.",
          "Follow the other Xid logged with it; alone, a process was stopped and nothing is needed."},
  XidInfo{46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing", XidCause::Driver,
          "The GPU stopped making progress and the driver timed it out.",
          "Reset the GPU before running on it again; tell the admins if it repeats."},
  XidInfo{48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", XidCause::Memory,
          "The GPU found an uncorrectable (double-bit) ECC error: data the program used was corrupt, and the cause is the hardware, not the program.",
          "Resubmit the job; the GPU needs a reset or a reboot, and the admins should check its ECC and remapping counts (RMA past the thresholds)."},
  XidInfo{56, "DISPLAY_CHANNEL_EXCEPTION", "Display Engine error", XidCause::Hardware,
          "The GPU's display engine reported an error (hardware or driver); datacenter GPUs since Ampere do not raise it.",
          "Tell the admins; NVIDIA support may be needed."},
  XidInfo{57, "FB_LINK_TRAINING_FAILURE_ERROR", "Error programming video memory interface", XidCause::Memory,
          "The driver could not set up the interface to the GPU's memory (hardware or driver; unused since Ampere).",
          "Tell the admins; the GPU may need service."},
  XidInfo{58, "FB_MEMORY_ERROR", "Unstable video memory interface detected", XidCause::Memory,
          "The interface to the GPU's memory was unstable, or an EDC error occurred (hardware or driver; unused since Ampere).",
          "Tell the admins; the GPU may need service."},
  XidInfo{61, "PMU_BREAKPOINT", "Internal micro-controller breakpoint/warning", XidCause::Driver,
          "A micro-controller inside the GPU stopped at a breakpoint or raised a warning: firmware (unused since Ampere).",
          "Tell the admins if it repeats."},
  XidInfo{62, "PMU_HALT_ERROR", "Internal micro-controller halt", XidCause::Hardware,
          "A micro-controller inside the GPU halted; hardware, firmware or heat can cause it.",
          "Reset the GPU before using it again, and tell the admins."},
  XidInfo{63, "INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", XidCause::Memory,
          "The GPU recorded a memory row remapping (a page retirement before Ampere) after ECC errors: the memory is working around worn cells.",
          "Nothing now; the remapping takes effect at the next GPU reset, so reset it when convenient."},
  XidInfo{64, "INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", XidCause::Memory,
          "The GPU could not remap a failing memory row (or retire a page): failing memory hardware.",
          "Reset the GPU and tell the admins; it may need replacing."},
  XidInfo{68, "ROBUST_CHANNEL_NVDEC0_ERROR", "NVDEC0 Exception", XidCause::Driver,
          "The video decoder engine NVDEC0 raised an exception (driver or hardware).",
          "Restart the program; tell the admins if it repeats."},
  XidInfo{69, "ROBUST_CHANNEL_GR_CLASS_ERROR", "Graphics Engine class error", XidCause::Application,
          "The GPU's graphics engine rejected a command, most likely bad data or calls from the program or its CUDA stack.",
          "Restart the program and check its CUDA versions; tell the admins if known-good code gets it too."},
  XidInfo{74, "NVLINK_ERROR", "NVLINK Error", XidCause::Link,
          "An NVLink connection to another GPU or an NVSwitch failed: the link itself, or the device at its other end (a failing peer GPU takes the link down too).",
          "Resubmit the job; the GPU needs a reset or a reboot, and the admins should call the vendor if it comes back."},
  XidInfo{79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", XidCause::Hardware,
          "The driver can no longer reach the GPU over PCIe: most often a failure of the PCIe link or of the GPU itself.",
          "Resubmit the job elsewhere and tell the admins; the node needs a restart."},
  XidInfo{92, "EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", XidCause::Memory,
          "The GPU is correcting many single-bit ECC errors; nothing was lost, but the memory may be degrading.",
          "Keep running; ask the admins to watch the GPU's ECC and remapping counts."},
  XidInfo{94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", XidCause::Memory,
          "An uncorrectable error, usually in memory, was contained to one program; the others on the GPU were not affected.",
          "Restart the affected program; reset the GPU when convenient."},
  XidInfo{95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", XidCause::Memory,
          "An uncorrectable error, usually in memory, could not be contained and affects every program on the GPU.",
          "Resubmit the job; the GPU must be reset before anything runs on it again."},
  XidInfo{109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "Context Switch Timeout Error", XidCause::Driver,
          "The GPU did not switch between contexts in time (driver, firmware or hardware).",
          "Reset the GPU; tell the admins if it repeats."},
  XidInfo{119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", XidCause::Driver,
          "The GPU System Processor, the firmware core inside the GPU, did not answer the driver in time.",
          "Reset the GPU or power-cycle the node; if it comes back, the admins should follow NVIDIA's GPU debug guidelines."},
  XidInfo{120, "GSP_ERROR", "GSP Error", XidCause::Driver,
          "Code running on the GPU System Processor, the firmware core inside the GPU, failed.",
          "Reset the GPU or power-cycle the node; if it comes back, the admins should follow NVIDIA's GPU debug guidelines."},
  XidInfo{121, "C2C_ERROR", "C2C Error", XidCause::Link,
          "The driver saw corrected errors on the C2C link between the GPU and its Grace CPU; programs are not affected.",
          "Nothing now; a GPU reset at the next service window retrains the link."},
  XidInfo{123, "SPI_PMU_RPC_WRITE_FAIL", "SPI PMU RPC write failure", XidCause::Hardware,
          "A write to the GPU's SPI flash through its micro-controller failed (unused since Ampere).",
          "Tell the admins."},
  XidInfo{140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "ECC Unrecovered Error", XidCause::Memory,
          "Uncorrectable memory errors happened in a way that kept the driver from offlining or remapping the bad memory: hardware.",
          "Resubmit the job and reset the GPU; the admins should call the vendor if it persists."},
  XidInfo{143, "GPU_INIT_ERROR", "GPU Initialization Error", XidCause::Hardware,
          "The GPU failed to initialise.",
          "Reset the GPU; tell the admins if it fails again."},
  XidInfo{144, "NVLINK_SAW_ERROR", "NVLINK: SAW Error", XidCause::Link,
          "An NVLink 5 error in the link's SAW unit (B100, GB200); the codes in the driver's message say whether it is fatal.",
          "Decode the message with NVIDIA's Xid 144-150 table; reset the GPU if it is fatal, and tell the admins."},
  XidInfo{145, "NVLINK_RLW_ERROR", "NVLINK: RLW Error", XidCause::Link,
          "An NVLink 5 error in the link's RLW unit (B100, GB200); the codes in the driver's message say whether it is fatal.",
          "Decode the message with NVIDIA's Xid 144-150 table; reset the GPU if it is fatal, and tell the admins."},
  XidInfo{146, "NVLINK_TLW_ERROR", "NVLINK: TLW Error", XidCause::Link,
          "An NVLink 5 error in the link's TLW unit (B100, GB200); the codes in the driver's message say whether it is fatal.",
          "Decode the message with NVIDIA's Xid 144-150 table; reset the GPU if it is fatal, and tell the admins."},
  XidInfo{147, "NVLINK_TREX_ERROR", "NVLINK: TREX Error", XidCause::Link,
          "An NVLink 5 error in the link's TREX unit (B100, GB200); not expected in production.",
          "Tell the admins."},
  XidInfo{148, "NVLINK_NVLPW_CTRL_ERROR", "NVLINK: NVLPW_CTRL Error", XidCause::Link,
          "An NVLink 5 error in the link's NVLPW control unit (B100, GB200), reported as non-fatal.",
          "Tell the admins if it repeats."},
  XidInfo{149, "NVLINK_NETIR_ERROR", "NVLINK: NETIR Error", XidCause::Link,
          "An NVLink 5 link event (B100, GB200): a link went down, its error rate rose, or the device at its other end failed.",
          "Decode the message with NVIDIA's Xid 144-150 table; reset the GPU if the link is down, and tell the admins."},
  XidInfo{150, "NVLINK_MSE_ERROR", "NVLINK: MSE Error", XidCause::Link,
          "The NVLink 5 management firmware (MSE) failed or degraded (B100, GB200): fatal.",
          "Reset the GPU and tell the admins."},
  XidInfo{154, "GPU_RECOVERY_ACTION_CHANGED", "GPU Recovery Action Changed", XidCause::Informational,
          "Because of another Xid, the driver changed the recovery the GPU needs: none, drain peer-to-peer, drain and reset, GPU reset, or node reboot.",
          "Do what its message says (e.g. \"Node Reboot Required\") and look at the Xid that caused it."},
  XidInfo{155, "NVLINK_SW_DEFINED_ERROR", "NVLINK: SW Defined Error", XidCause::Link,
          "An NVLink link went down on purpose: software or an administrator took it down or put it to sleep (B100, GB200).",
          "Reset the GPU; if nobody meant to take the link down, ask the admins."},
  XidInfo{156, "RESOURCE_RETIREMENT_EVENT", "Resource Retirement Event", XidCause::Hardware,
          "The GPU retired a faulty internal resource so that it can keep working.",
          "Reset the GPU so that the retirement takes effect."},
  XidInfo{157, "RESOURCE_RETIREMENT_FAILURE", "Resource Retirement Failure", XidCause::Hardware,
          "The GPU could not retire a faulty resource because no spare was left, so the same error may come back.",
          "Programs can still run; tell the admins, the GPU may need service."},
  XidInfo{158, "GPU_FATAL_TIMEOUT", "GPU Fatal Timeout", XidCause::Hardware,
          "The GPU stopped responding within a fatal time limit.",
          "Reset the GPU and tell the admins."},
  XidInfo{171, "UNCORRECTABLE_DRAM_ERROR", "Uncorrectable DRAM error (details of an Xid 48)", XidCause::Memory,
          "The uncorrectable ECC error of an Xid 48 was in the GPU's DRAM, its main memory.",
          "As for Xid 48: resubmit the job; the GPU needs a reset, and the admins should check its remapped rows."},
  XidInfo{172, "UNCORRECTABLE_SRAM_ERROR", "Uncorrectable SRAM error (details of an Xid 48)", XidCause::Memory,
          "The uncorrectable ECC error of an Xid 48 was in on-chip SRAM (caches, register files).",
          "As for Xid 48: resubmit the job; the GPU needs a reset, and the admins should check its SRAM error threshold (RMA when exceeded)."},
};
// clang-format on

}  // namespace

std::span<const XidInfo> xid_catalog() {
  return kCatalog;
}

const XidInfo* xid_info(unsigned xid) {
  for (const XidInfo& info : kCatalog) {
    if (info.xid == xid) return &info;
  }
  return nullptr;
}

std::string xid_title(unsigned xid) {
  std::string title = "Xid " + std::to_string(xid);
  if (const XidInfo* info = xid_info(xid)) {
    title += ": ";
    title += info->description;
  }
  return title;
}

std::optional<unsigned> xid_from_title(std::string_view detail) {
  constexpr std::string_view kPrefix = "Xid ";
  if (detail.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  const char* begin = detail.data() + kPrefix.size();
  const char* end = detail.data() + detail.size();
  if (begin == end || *begin < '0' || *begin > '9') return std::nullopt;
  unsigned xid = 0;
  const auto [next, error] = std::from_chars(begin, end, xid);
  if (error != std::errc()) return std::nullopt;
  if (next != end && *next != ':' && *next != ' ') return std::nullopt;
  return xid;
}

std::string_view xid_cause_word(XidCause cause) {
  switch (cause) {
    case XidCause::Application:
      return "the application";
    case XidCause::Hardware:
      return "hardware";
    case XidCause::Memory:
      return "the GPU's memory (hardware)";
    case XidCause::Link:
      return "a link (PCIe, NVLink or C2C)";
    case XidCause::Driver:
      return "the driver or the GPU's firmware";
    case XidCause::Thermal:
      return "heat";
    case XidCause::Informational:
      return "nothing by itself (it accompanies another Xid)";
    case XidCause::Unknown:
      break;
  }
  return "unknown";
}

}  // namespace gpuscope
