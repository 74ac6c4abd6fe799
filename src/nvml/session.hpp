// An initialised NVML: nvmlInit on construction, nvmlShutdown on destruction (NVML counts them,
// so sessions may overlap).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "nvml/device.hpp"

namespace gpuscope::nvml {

class Session {
 public:
  // Initialises NVML. Throws Error with nvmlInit's failure, the driver's words and what to do
  // (for the simulated library also the simulator's reason, e.g. a scenario parse error).
  explicit Session(std::shared_ptr<const Library> library);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::shared_ptr<const Library>& library() const { return library_; }

  unsigned device_count() const;
  // The device at NVML index `index`; throws Error if the driver cannot give its handle.
  Device device(unsigned index) const;
  // The device at NVML index `index`, or the driver's failure (e.g. GPU_IS_LOST).
  Expected<Device> try_device(unsigned index) const;
  // The device with `uuid` ("GPU-..."), or the failure (kErrorNotFound when no GPU has it; a
  // MIG device's UUID is no GPU's either: see parent_of_mig).
  Expected<Device> device_by_uuid(std::string_view uuid) const;
  // The whole GPU that the MIG device `mig_uuid` ("MIG-...") is part of, or the failure:
  // kErrorNotFound when the driver knows no device with that UUID, kErrorInvalidArgument when the
  // UUID names a full GPU, kErrorFunctionNotFound from a driver without the MIG entry points.
  Expected<Device> parent_of_mig(std::string_view mig_uuid) const;

  std::optional<std::string> driver_version() const;
  std::optional<std::string> nvml_version() const;
  // "12.4" from the CUDA driver API version the driver supports (12040).
  std::optional<std::string> cuda_driver_version() const;

 private:
  // The device whose handle is `handle`, found by index (gpuscope names GPUs by their NVML index
  // everywhere); kErrorNotFound, blamed on `symbol`, when no index has that handle.
  Expected<Device> device_with_handle(nvmlDevice_t handle, const char* symbol) const;

  std::shared_ptr<const Library> library_;
};

}  // namespace gpuscope::nvml
