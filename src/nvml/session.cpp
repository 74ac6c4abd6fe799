#include "nvml/session.hpp"

#include <fmt/format.h>

#include <array>
#include <string>

namespace gpuscope::nvml {

Session::Session(std::shared_ptr<const Library> library) : library_(std::move(library)) {
  if (auto status = library_->call(&FunctionTable::Init); !status) {
    throw library_->to_error(status.error(), "cannot initialise NVML");
  }
}

Session::~Session() {
  // A failing shutdown at exit cannot be acted on; the process is leaving the driver anyway.
  (void)library_->call(&FunctionTable::Shutdown);
}

unsigned Session::device_count() const {
  unsigned count = 0;
  if (auto status = library_->call(&FunctionTable::DeviceGetCount, &count); !status) {
    throw library_->to_error(status.error(), "cannot count the GPUs");
  }
  return count;
}

Expected<Device> Session::try_device(unsigned index) const {
  nvmlDevice_t handle = nullptr;
  auto status = library_->call(&FunctionTable::DeviceGetHandleByIndex, index, &handle);
  if (!status) return tl::unexpected(status.error());
  return Device(library_, handle, index);
}

Device Session::device(unsigned index) const {
  auto device = try_device(index);
  if (!device) throw library_->to_error(device.error(), fmt::format("cannot open GPU {}", index));
  return *std::move(device);
}

Expected<Device> Session::device_with_handle(nvmlDevice_t handle, const char* symbol) const {
  const unsigned count = device_count();
  for (unsigned i = 0; i < count; ++i) {
    auto candidate = try_device(i);
    if (candidate && candidate->handle() == handle) return candidate;
  }
  return tl::unexpected(Failure{kErrorNotFound, symbol});
}

Expected<Device> Session::device_by_uuid(std::string_view uuid) const {
  const std::string wanted(uuid);
  nvmlDevice_t handle = nullptr;
  if (auto status = library_->call(&FunctionTable::DeviceGetHandleByUUID, wanted.c_str(), &handle);
      !status) {
    return tl::unexpected(status.error());
  }
  // A MIG device's handle is no index's handle, so a MIG UUID ends in kErrorNotFound here.
  return device_with_handle(handle, "nvmlDeviceGetHandleByUUID");
}

Expected<Device> Session::parent_of_mig(std::string_view mig_uuid) const {
  const std::string wanted(mig_uuid);
  nvmlDevice_t handle = nullptr;
  if (auto status = library_->call(&FunctionTable::DeviceGetHandleByUUID, wanted.c_str(), &handle);
      !status) {
    return tl::unexpected(status.error());
  }
  unsigned is_mig = 0;
  if (auto status = library_->call(&FunctionTable::DeviceIsMigDeviceHandle, handle, &is_mig);
      !status) {
    return tl::unexpected(status.error());
  }
  if (is_mig == 0) {  // a full GPU's UUID: it has no parent
    return tl::unexpected(Failure{kErrorInvalidArgument, "nvmlDeviceIsMigDeviceHandle"});
  }
  nvmlDevice_t parent = nullptr;
  if (auto status =
          library_->call(&FunctionTable::DeviceGetDeviceHandleFromMigDeviceHandle, handle, &parent);
      !status) {
    return tl::unexpected(status.error());
  }
  return device_with_handle(parent, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
}

namespace {
template <typename Call>
std::optional<std::string> read_version(const Library& library, Call call) {
  std::array<char, kSystemVersionBufferSize> buffer{};
  if (!library.call(call, buffer.data(), static_cast<unsigned>(buffer.size()))) return std::nullopt;
  return std::string(buffer.data());
}
}  // namespace

std::optional<std::string> Session::driver_version() const {
  return read_version(*library_, &FunctionTable::SystemGetDriverVersion);
}

std::optional<std::string> Session::nvml_version() const {
  return read_version(*library_, &FunctionTable::SystemGetNvmlVersion);
}

std::optional<std::string> Session::cuda_driver_version() const {
  int version = 0;
  if (!library_->call(&FunctionTable::SystemGetCudaDriverVersion, &version)) return std::nullopt;
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

}  // namespace gpuscope::nvml
