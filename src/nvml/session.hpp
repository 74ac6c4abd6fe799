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
  // The device with `uuid` ("GPU-..."), or the failure (kErrorNotFound when no GPU has it).
  Expected<Device> device_by_uuid(std::string_view uuid) const;

  std::optional<std::string> driver_version() const;
  std::optional<std::string> nvml_version() const;
  // "12.4" from the CUDA driver API version the driver supports (12040).
  std::optional<std::string> cuda_driver_version() const;

 private:
  std::shared_ptr<const Library> library_;
};

}  // namespace gpuscope::nvml
