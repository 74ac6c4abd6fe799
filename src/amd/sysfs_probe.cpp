#include "amd/sysfs_probe.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "util/small_file.hpp"

namespace gpuscope::amd {
namespace {

constexpr const char* kNoGpu = "no AMD GPU found";

std::string read_word(const std::filesystem::path& file) {
  const auto text = util::read_small_file(file.string(), 4096);
  if (!text) return {};
  std::string word = *text;
  while (!word.empty() && (word.back() == '\n' || word.back() == ' ')) word.pop_back();
  return word;
}

// PCI class 0x03xxxx (display) or 0x12xxxx (processing accelerator: Instinct GPUs).
bool gpu_class(const std::string& pci_class) {
  return pci_class.starts_with("0x03") || pci_class.starts_with("0x12");
}

std::string list(const std::vector<std::string>& items, std::size_t most = 4) {
  std::string text;
  for (std::size_t i = 0; i < items.size() && i < most; ++i) {
    text += (i == 0 ? "" : ", ") + items[i];
  }
  if (items.size() > most) text += fmt::format(" and {} more", items.size() - most);
  return text;
}

}  // namespace

SysfsFindings probe_sysfs(const std::filesystem::path& root) {
  SysfsFindings findings;
  const std::filesystem::path devices = root / "sys/bus/pci/devices";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(devices, error)) {
    const std::filesystem::path device = entry.path();
    if (read_word(device / "vendor") != "0x1002" || !gpu_class(read_word(device / "class"))) {
      continue;
    }
    const std::string address = device.filename().string();
    findings.gpus.push_back(address);
    std::error_code link_error;
    const auto driver = std::filesystem::read_symlink(device / "driver", link_error);
    if (link_error || driver.filename() != "amdgpu") {
      findings.unbound.push_back(address);
      continue;
    }
    for (const char* name : {"gpu_metrics", "mem_info_vram_total"}) {
      const std::filesystem::path file = device / name;
      const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
      if (fd >= 0) {
        ::close(fd);
      } else if (errno == EACCES || errno == EPERM) {
        findings.unreadable.push_back(file.string());
      }
    }
  }
  std::sort(findings.gpus.begin(), findings.gpus.end());
  return findings;
}

Error no_amd_gpu_error(const std::string& library, const std::string& detail, InitProblem problem,
                       const SysfsFindings& findings) {
  if (problem == InitProblem::Permission || !findings.unreadable.empty()) {
    std::string why = detail;
    if (!findings.unreadable.empty()) {
      why += fmt::format("{}cannot read {}", why.empty() ? "" : "; ", list(findings.unreadable));
    }
    return Error(fmt::format("permission denied reading the AMD GPUs' files ({})", library),
                 std::move(why),
                 "run gpuscope as a user who may read them (on most systems a member of the "
                 "video and render groups), or give the container the host's /sys and /dev/dri");
  }
  if (problem == InitProblem::DriverNotLoaded || !findings.unbound.empty()) {
    std::string why = detail;
    if (!findings.unbound.empty()) {
      why += fmt::format("{}no amdgpu driver is bound to {} (sysfs)", why.empty() ? "" : "; ",
                         list(findings.unbound));
    }
    return Error("the AMD GPU kernel driver (amdgpu) is not loaded", std::move(why),
                 "load it (modprobe amdgpu; Instinct GPUs need ROCm's amdgpu-dkms) and look for "
                 "its errors in dmesg");
  }
  if (findings.gpus.empty()) {
    return Error(kNoGpu,
                 fmt::format("{} found none ({}); sysfs lists no AMD display or accelerator PCI "
                             "device",
                             library, detail),
                 "gpuscope devices --simulate mi300x shows what gpuscope reports on an AMD node");
  }
  return Error(fmt::format("{} could not initialise", library), detail,
               fmt::format("AMD GPUs are present ({}); look for amdgpu errors in dmesg, and try "
                           "amd-smi or rocm-smi to see whether they fail the same way",
                           list(findings.gpus)));
}

bool is_no_amd_gpu(const Error& error) {
  return error.summary() == kNoGpu;
}

}  // namespace gpuscope::amd
