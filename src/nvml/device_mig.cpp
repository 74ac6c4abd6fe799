// The MIG calls of nvml::Device: the route an unprivileged user has to a GPU's MIG devices
// (mode, maximum count, handles by index), and what each MIG device says of itself.
#include "nvml/device.hpp"

namespace gpuscope::nvml {

Expected<MigMode> Device::mig_mode() const {
  unsigned current = kDeviceMigDisable;
  unsigned pending = kDeviceMigDisable;
  auto status = library_->call(&FunctionTable::DeviceGetMigMode, handle_, &current, &pending);
  if (!status) return tl::unexpected(status.error());
  return MigMode{current == kDeviceMigEnable, pending == kDeviceMigEnable};
}

Expected<unsigned> Device::max_mig_device_count() const {
  unsigned count = 0;
  auto status = library_->call(&FunctionTable::DeviceGetMaxMigDeviceCount, handle_, &count);
  if (!status) return tl::unexpected(status.error());
  return count;
}

Expected<std::optional<Device>> Device::mig_device(unsigned index) const {
  nvmlDevice_t mig = nullptr;
  auto status =
      library_->call(&FunctionTable::DeviceGetMigDeviceHandleByIndex, handle_, index, &mig);
  if (!status) {
    // NOT_FOUND: no MIG device at this index (a hole left by a destroyed instance).
    if (status.error().code == kErrorNotFound) return std::optional<Device>{};
    return tl::unexpected(status.error());
  }
  return std::optional<Device>(Device(library_, mig, index));
}

Expected<std::vector<Device>> Device::mig_devices() const {
  std::vector<Device> devices;
  auto mode = mig_mode();
  if (!mode) return tl::unexpected(mode.error());
  if (!mode->current) return devices;
  auto count = max_mig_device_count();
  if (!count) return tl::unexpected(count.error());
  for (unsigned index = 0; index < *count; ++index) {
    auto device = mig_device(index);
    if (!device) return tl::unexpected(device.error());
    if (*device) devices.push_back(std::move(**device));
  }
  return devices;
}

Expected<unsigned> Device::gpu_instance_id() const {
  unsigned id = 0;
  auto status = library_->call(&FunctionTable::DeviceGetGpuInstanceId, handle_, &id);
  if (!status) return tl::unexpected(status.error());
  return id;
}

Expected<unsigned> Device::compute_instance_id() const {
  unsigned id = 0;
  auto status = library_->call(&FunctionTable::DeviceGetComputeInstanceId, handle_, &id);
  if (!status) return tl::unexpected(status.error());
  return id;
}

Expected<MigAttributes> Device::attributes() const {
  nvmlDeviceAttributes_t raw{};
  auto status = library_->call(&FunctionTable::DeviceGetAttributes, handle_, &raw);
  if (!status) return tl::unexpected(status.error());
  MigAttributes out;
  out.multiprocessor_count = raw.multiprocessorCount;
  out.copy_engine_count = raw.sharedCopyEngineCount;
  out.decoder_count = raw.sharedDecoderCount;
  out.encoder_count = raw.sharedEncoderCount;
  out.jpeg_count = raw.sharedJpegCount;
  out.ofa_count = raw.sharedOfaCount;
  out.gpu_instance_slice_count = raw.gpuInstanceSliceCount;
  out.compute_instance_slice_count = raw.computeInstanceSliceCount;
  out.memory_mib = raw.memorySizeMB;
  return out;
}

}  // namespace gpuscope::nvml
