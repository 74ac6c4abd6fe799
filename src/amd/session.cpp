#include "amd/session.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "amd/devices.hpp"
#include "amd/sysfs_probe.hpp"
#include "core/error.hpp"

namespace gpuscope::amd {

// What the tries so far found, for the diagnosis when none gives a GPU.
struct Session::Attempt {
  std::string library;  // "ROCm SMI (librocm_smi64.so.1)"
  std::string detail;   // the library's words
  InitProblem problem = InitProblem::None;
  std::string amd_smi_reason;  // why AMD SMI gave no GPU, when ROCm SMI is tried next
};

namespace {

constexpr const char* kNoLibrary = "no AMD SMI or ROCm SMI library found";

std::string with_simulator(const std::string& words, const std::string& simulator) {
  return simulator.empty() ? words : words + ": " + simulator;
}

// Runs `init` with stderr sent to a temporary file, and appends what the library wrote there to
// `detail` on one line: ROCm SMI prints its reasons ("Failed to open drm root directory") to
// stderr, which would otherwise come before gpuscope's own message. Called before any thread of
// gpuscope's that writes to stderr starts (the libraries are initialised at start-up).
template <typename Fn>
auto quietly(bool capture, std::string& words, Fn&& init) {
  std::FILE* file = capture ? std::tmpfile() : nullptr;
  const int saved = file != nullptr ? ::dup(STDERR_FILENO) : -1;
  if (saved < 0) return init();
  std::fflush(stderr);
  ::dup2(::fileno(file), STDERR_FILENO);
  auto result = init();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::rewind(file);
  char buffer[1024];
  const std::size_t n = std::fread(buffer, 1, sizeof buffer, file);
  std::fclose(file);
  for (std::size_t i = 0; i < n; ++i) {
    const char c = buffer[i];
    if (c == '\n') {
      if (!words.empty() && words.back() != ' ') words += "; ";
    } else if (c >= ' ') {
      words += c;
    }
  }
  while (!words.empty() && (words.back() == ' ' || words.back() == ';')) words.pop_back();
  return result;
}

InitProblem amd_smi_problem(std::uint32_t code) {
  if (code == kAmdNoPerm) return InitProblem::Permission;
  if (code == kAmdDriverNotLoaded) return InitProblem::DriverNotLoaded;
  return InitProblem::Failed;
}

InitProblem rocm_smi_problem(std::uint32_t code) {
  return code == kRsmiPermission ? InitProblem::Permission : InitProblem::Failed;
}

}  // namespace

std::unique_ptr<Session> Session::try_amd_smi(std::shared_ptr<const AmdSmiLibrary> library,
                                              Attempt& attempt) {
  using T = AmdSmiApi::Table;
  attempt.library = fmt::format("AMD SMI ({})", library->path());
  const auto fail = [&](const Failure& failure, InitProblem problem) {
    attempt.detail = with_simulator(library->describe(failure), library->simulator_last_error());
    attempt.problem = problem;
    return nullptr;
  };
  std::string printed;
  if (auto s = quietly(!library->simulated(), printed,
                       [&] { return library->call(&T::Init, kAmdInitAmdGpus); });
      !s) {
    fail(s.error(), amd_smi_problem(s.error().code));
    if (!printed.empty()) attempt.detail += ": " + printed;
    return nullptr;
  }
  auto session = std::unique_ptr<Session>(new Session());
  session->which_ = Which::AmdSmi;
  session->path_ = library->path();
  session->amd_smi_ = library;  // from here on, the destructor shuts the library down
  amdsmi_version_t version{};
  if (library->call(&T::GetLibVersion, &version)) {
    session->version_ =
        fmt::format("{}.{}.{}.{}", version.year, version.major, version.minor, version.release);
  }
  std::uint32_t sockets = 0;
  if (auto s = library->call(&T::GetSocketHandles, &sockets, nullptr); !s) {
    return fail(s.error(), amd_smi_problem(s.error().code));
  }
  std::vector<amdsmi_socket_handle> socket_handles(sockets);
  if (auto s = library->call(&T::GetSocketHandles, &sockets, socket_handles.data()); !s) {
    return fail(s.error(), amd_smi_problem(s.error().code));
  }
  for (amdsmi_socket_handle socket : socket_handles) {
    std::uint32_t count = 0;
    if (auto s = library->call(&T::GetProcessorHandles, socket, &count, nullptr); !s) {
      return fail(s.error(), amd_smi_problem(s.error().code));
    }
    std::vector<amdsmi_processor_handle> handles(count);
    if (auto s = library->call(&T::GetProcessorHandles, socket, &count, handles.data()); !s) {
      return fail(s.error(), amd_smi_problem(s.error().code));
    }
    for (amdsmi_processor_handle handle : handles) {
      processor_type_t type = kProcessorAmdGpu;
      // Without amdsmi_get_processor_type (older libraries), every processor is a GPU: gpuscope
      // initialised AMD SMI for AMD GPUs only.
      if (library->call(&T::GetProcessorType, handle, &type) && type != kProcessorAmdGpu) continue;
      session->devices_.push_back(make_amd_smi_device(library, handle));
    }
  }
  if (session->devices_.empty()) {
    attempt.detail = "it lists no AMD GPU";
    attempt.problem = InitProblem::None;
    return nullptr;
  }
  return session;
}

std::unique_ptr<Session> Session::try_rocm_smi(std::shared_ptr<const RocmSmiLibrary> library,
                                               Attempt& attempt) {
  using T = RocmSmiApi::Table;
  attempt.library = fmt::format("ROCm SMI ({})", library->path());
  const auto fail = [&](const Failure& failure) {
    attempt.detail = with_simulator(library->describe(failure), library->simulator_last_error());
    attempt.problem = rocm_smi_problem(failure.code);
    return nullptr;
  };
  std::string printed;
  if (auto s = quietly(!library->simulated(), printed,
                       [&] { return library->call(&T::Init, std::uint64_t{0}); });
      !s) {
    fail(s.error());
    if (!printed.empty()) attempt.detail += ": " + printed;
    return nullptr;
  }
  auto session = std::unique_ptr<Session>(new Session());
  session->which_ = Which::RocmSmi;
  session->path_ = library->path();
  session->rocm_smi_ = library;
  rsmi_version_t version{};
  if (library->call(&T::VersionGet, &version)) {
    session->version_ = fmt::format("{}.{}.{}", version.major, version.minor, version.patch);
  }
  std::uint32_t count = 0;
  if (auto s = library->call(&T::NumMonitorDevices, &count); !s) return fail(s.error());
  for (std::uint32_t i = 0; i < count; ++i) {
    session->devices_.push_back(make_rocm_smi_device(library, i));
  }
  if (session->devices_.empty()) {
    attempt.detail = "it lists no AMD GPU";
    attempt.problem = InitProblem::None;
    return nullptr;
  }
  return session;
}

std::unique_ptr<Session> Session::open(const OpenOptions& options) {
  const bool given = !options.amd_smi_path.empty() || !options.rocm_smi_path.empty();
  Attempt attempt;
  std::string not_found;
  // AMD SMI first: the given one, or the system's unless only ROCm SMI was given.
  std::shared_ptr<const AmdSmiLibrary> amd_smi;
  if (!options.amd_smi_path.empty()) {
    amd_smi = AmdSmiLibrary::open(options.amd_smi_path, options.simulated);
  } else if (!given) {
    amd_smi = AmdSmiLibrary::open_system(not_found);
  }
  if (amd_smi) {
    if (auto session = try_amd_smi(amd_smi, attempt)) return session;
    attempt.amd_smi_reason = fmt::format("{}: {}", attempt.library, attempt.detail);
  }
  std::shared_ptr<const RocmSmiLibrary> rocm_smi;
  std::string rocm_not_found;
  if (!options.rocm_smi_path.empty()) {
    rocm_smi = RocmSmiLibrary::open(options.rocm_smi_path, options.simulated);
  } else if (!given) {
    rocm_smi = RocmSmiLibrary::open_system(rocm_not_found);
  }
  if (rocm_smi) {
    if (auto session = try_rocm_smi(rocm_smi, attempt)) {
      session->fallback_reason_ = attempt.amd_smi_reason;
      return session;
    }
    if (!attempt.amd_smi_reason.empty()) attempt.detail += "; " + attempt.amd_smi_reason;
  }
  if (!amd_smi && !rocm_smi) {
    throw Error(kNoLibrary,
                fmt::format("libamd_smi.so: {}; librocm_smi64.so: {}", not_found, rocm_not_found),
                "on an AMD GPU node install ROCm's amd-smi-lib or Debian's librocm-smi64-1, or "
                "name the library with GPUSCOPE_AMD_SMI_LIBRARY or GPUSCOPE_ROCM_SMI_LIBRARY");
  }
  // The simulated GPUs have no sysfs; a real library's failure is explained from it.
  const SysfsFindings findings =
      options.simulated ? SysfsFindings{} : probe_sysfs(options.sysfs_root);
  throw no_amd_gpu_error(attempt.library, attempt.detail, attempt.problem, findings);
}

bool is_no_amd_library(const Error& error) {
  return error.summary() == kNoLibrary;
}

Session::~Session() {
  // The devices hold the library; shut it down before they go, as the libraries ask.
  if (amd_smi_) (void)amd_smi_->call(&AmdSmiApi::Table::ShutDown);
  if (rocm_smi_) (void)rocm_smi_->call(&RocmSmiApi::Table::ShutDown);
}

FailureKind classify(Which which, const Failure& failure) {
  const std::uint32_t code = failure.code;
  if (which == Which::AmdSmi) {
    if (code == kAmdNotSupported || code == kAmdFunctionNotFound) return FailureKind::Unsupported;
    return code == kAmdNoPerm ? FailureKind::Permission : FailureKind::Transient;
  }
  if (code == kRsmiNotSupported || code == kRsmiNotYetImplemented ||
      code == kRsmiFunctionNotFound) {
    return FailureKind::Unsupported;
  }
  return code == kRsmiPermission ? FailureKind::Permission : FailureKind::Transient;
}

}  // namespace gpuscope::amd
