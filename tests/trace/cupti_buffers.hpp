// CUPTI activity buffers built by hand, record by record, laid out exactly as the CUPTI headers
// define the records (the structs themselves): what CUPTI hands the buffer-completed callback,
// without a GPU.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "trace/cupti/activity_records.hpp"

namespace gpuscope::trace::testing {

class CuptiBuffer {
 public:
  explicit CuptiBuffer(std::size_t capacity = 1 << 16)
      : data_(static_cast<std::uint8_t*>(std::aligned_alloc(8, capacity)), &std::free),
        capacity_(capacity) {
    std::memset(data_.get(), 0, capacity);
  }

  // Appends a zeroed record of type Record with its kind set; returns it for filling in.
  template <typename Record>
  Record& add(CUpti_ActivityKind kind) {
    if (used_ + sizeof(Record) > capacity_) std::abort();
    auto* record = reinterpret_cast<Record*>(data_.get() + used_);
    record->kind = kind;
    used_ += sizeof(Record);
    return *record;
  }

  std::uint8_t* data() { return data_.get(); }
  std::size_t used() const { return used_; }

 private:
  std::unique_ptr<std::uint8_t, decltype(&std::free)> data_;
  std::size_t capacity_;
  std::size_t used_ = 0;
};

inline cupti::KernelActivity& add_kernel(CuptiBuffer& b, const char* name, std::uint64_t start,
                                         std::uint64_t end, std::uint32_t device,
                                         std::uint32_t stream) {
  auto& k = b.add<cupti::KernelActivity>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = name;
  k.start = start;
  k.end = end;
  k.deviceId = device;
  k.contextId = 1;
  k.streamId = stream;
  k.correlationId = 42;
  k.gridX = 108;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 64;
  k.staticSharedMemory = 4096;
  k.dynamicSharedMemory = 8192;
  return k;
}

inline cupti::MemcpyActivity& add_memcpy(CuptiBuffer& b, std::uint64_t start, std::uint64_t end,
                                         std::uint64_t bytes, std::uint8_t copy_kind,
                                         std::uint32_t device) {
  auto& m = b.add<cupti::MemcpyActivity>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.start = start;
  m.end = end;
  m.bytes = bytes;
  m.copyKind = copy_kind;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.deviceId = device;
  m.contextId = 1;
  m.streamId = 7;
  m.correlationId = 43;
  return m;
}

inline cupti::MemsetActivity& add_memset(CuptiBuffer& b, std::uint64_t start, std::uint64_t end,
                                         std::uint64_t bytes, std::uint32_t device) {
  auto& m = b.add<cupti::MemsetActivity>(CUPTI_ACTIVITY_KIND_MEMSET);
  m.start = start;
  m.end = end;
  m.bytes = bytes;
  m.value = 0;
  m.deviceId = device;
  m.contextId = 1;
  m.streamId = 7;
  m.correlationId = 44;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  return m;
}

inline cupti::DeviceActivity& add_device(CuptiBuffer& b, std::uint32_t id,
                                         const std::uint8_t (&uuid)[16], const char* name) {
  auto& d = b.add<cupti::DeviceActivity>(CUPTI_ACTIVITY_KIND_DEVICE);
  d.id = id;
  std::memcpy(&d.uuid, uuid, 16);
  d.name = name;
  d.isCudaVisible = 1;
  d.computeCapabilityMajor = 9;
  return d;
}

// An NVTX marker as CUPTI records it: a range's start (with its message and domain), its end, or
// an instant, of a thread.
inline cupti::MarkerActivity& add_marker(CuptiBuffer& b, CUpti_ActivityFlag flags, std::uint32_t id,
                                         std::uint64_t timestamp, const char* name,
                                         const char* domain, std::uint32_t pid, std::uint32_t tid) {
  auto& m = b.add<cupti::MarkerActivity>(CUPTI_ACTIVITY_KIND_MARKER);
  m.flags = flags;
  m.timestamp = timestamp;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = pid;
  m.objectId.pt.threadId = tid;
  m.name = name;
  m.domain = domain;
  return m;
}

inline cupti::MarkerDataActivity& add_marker_data(CuptiBuffer& b, std::uint32_t id,
                                                  std::uint32_t category, std::uint32_t color) {
  auto& m = b.add<cupti::MarkerDataActivity>(CUPTI_ACTIVITY_KIND_MARKER_DATA);
  m.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
  m.id = id;
  m.category = category;
  m.color = color;
  return m;
}

}  // namespace gpuscope::trace::testing
