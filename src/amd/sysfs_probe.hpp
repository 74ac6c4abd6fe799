// Why an AMD library found no GPU: what sysfs says about AMD GPUs, their kernel driver and the
// files the libraries read, turned into one clear error. Reads a sysfs root a test can make up.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace gpuscope::amd {

struct SysfsFindings {
  // PCI addresses of AMD (vendor 0x1002) display controllers and processing accelerators.
  std::vector<std::string> gpus;
  // Of those, the ones no amdgpu driver is bound to.
  std::vector<std::string> unbound;
  // Files of bound GPUs the libraries read that this user may not read.
  std::vector<std::string> unreadable;
};

// Looks at <root>/sys/bus/pci/devices (root is "/" on a real machine). Never throws: what cannot
// be read is left out.
SysfsFindings probe_sysfs(const std::filesystem::path& root);

// What became of the libraries' initialisation, for the diagnosis.
enum class InitProblem {
  None,             // initialised, but no AMD GPU among its devices
  Permission,       // the library said permission denied
  DriverNotLoaded,  // the library said the kernel driver is not loaded
  Failed,           // another failure
};

// The error to show when no AMD GPU could be used: "no AMD GPU found", "the amdgpu kernel driver
// is not loaded", "permission denied ..." or "<library> could not initialise", each with the
// library's words (`detail`) and what to do. `library` names the library tried.
Error no_amd_gpu_error(const std::string& library, const std::string& detail, InitProblem problem,
                       const SysfsFindings& findings);

// Whether `error` is no_amd_gpu_error's "no AMD GPU found" (nothing wrong: there is none).
bool is_no_amd_gpu(const Error& error);

}  // namespace gpuscope::amd
