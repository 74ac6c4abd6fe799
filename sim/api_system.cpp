// Library, system and enumeration entry points.
#include "sim/api.hpp"
#include "sim/api_util.hpp"
#include "sim/driver.hpp"

namespace gpuscope::sim {

nvmlReturn_t Init() {
  return process_driver().init(options_from_environment());
}

nvmlReturn_t Shutdown() {
  return process_driver().shutdown();
}

nvmlReturn_t SystemGetDriverVersion(char* version, unsigned int length) {
  return process_driver().system_call(Entry::SystemGetDriverVersion, [&](const Scenario& s) {
    return copy_string(s.driver_version, version, length);
  });
}

nvmlReturn_t SystemGetNvmlVersion(char* version, unsigned int length) {
  return process_driver().system_call(Entry::SystemGetNvmlVersion, [&](const Scenario& s) {
    return copy_string(s.nvml_version, version, length);
  });
}

nvmlReturn_t SystemGetCudaDriverVersion(int* version) {
  return process_driver().system_call(Entry::SystemGetCudaDriverVersion, [&](const Scenario& s) {
    if (version == nullptr) return nvml::kErrorInvalidArgument;
    *version = s.cuda_driver_version;
    return nvml::kSuccess;
  });
}

nvmlReturn_t DeviceGetCount(unsigned int* count) {
  return process_driver().device_count(Entry::DeviceGetCount, count);
}

nvmlReturn_t DeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return process_driver().handle_by_index(Entry::DeviceGetHandleByIndex, index, device);
}

nvmlReturn_t DeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  return process_driver().handle_by_uuid(uuid, device);
}

nvmlReturn_t DeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* is_mig_device) {
  return process_driver().is_mig_handle(device, is_mig_device);
}

nvmlReturn_t DeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig_device,
                                                      nvmlDevice_t* device) {
  return process_driver().parent_of_mig(mig_device, device);
}

}  // namespace gpuscope::sim
