#include "trace/cupti/activity_records.hpp"

#include <cstring>
#include <string_view>

namespace gpuscope::trace::cupti {

static_assert(CUPTI_API_VERSION >= 130000,
              "gpuscope's CUPTI library reads the record layouts of CUDA 13 (CUPTI_API_VERSION "
              "130000 or newer); CMake should have skipped it");

void ActivityProcessor::process_buffer(std::uint8_t* buffer, std::size_t valid_bytes,
                                       SidecarBatch& out) {
  ++counts_.buffers;
  if (buffer == nullptr || valid_bytes == 0) return;
  CUpti_Activity* record = nullptr;
  std::uint64_t other = 0;
  for (;;) {
    const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_bytes, &record);
    if (status != CUPTI_SUCCESS) {
      // MAX_LIMIT_REACHED: the end of the buffer. Anything else (INVALID_KIND: an incomplete
      // record) ends the walk too; CUPTI gives no way to step over it.
      if (status != CUPTI_ERROR_MAX_LIMIT_REACHED) {
        const char* text = nullptr;
        cuptiGetResultString(status, &text);
        out.note(std::string("an activity buffer ended early: cuptiActivityGetNextRecord said ") +
                 (text != nullptr ? text : "an unknown error"));
      }
      break;
    }
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        kernel(*reinterpret_cast<const KernelActivity*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        memcpy(*reinterpret_cast<const MemcpyActivity*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        memcpy(*reinterpret_cast<const PeerMemcpyActivity*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        memset(*reinterpret_cast<const MemsetActivity*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE:
        device(*reinterpret_cast<const DeviceActivity*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MARKER:
        marker(*reinterpret_cast<const MarkerActivity*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MARKER_DATA:
        marker_data(*reinterpret_cast<const MarkerDataActivity*>(record), out);
        break;
      default:
        ++other;
        break;
    }
  }
  counts_.other += other;
}

std::uint32_t ActivityProcessor::name_id(const char* name, SidecarBatch& out) {
  const std::string_view text = name != nullptr ? std::string_view(name) : std::string_view();
  auto [it, added] =
      names_.try_emplace(std::string(text), static_cast<std::uint32_t>(names_.size() + 1));
  if (added) {
    const NameRecord record{it->second, 0};
    out.add(RecordType::Name, record, text);
  }
  return it->second;
}

void ActivityProcessor::kernel(const KernelActivity& k, SidecarBatch& out) {
  if (k.start == 0 || k.end == 0) {
    ++counts_.untimed;
    return;
  }
  KernelRecord r{};
  r.start = k.start;
  r.end = k.end;
  r.cuda_device = k.deviceId;
  r.context_id = k.contextId;
  r.stream_id = k.streamId;
  r.correlation_id = k.correlationId;
  r.grid[0] = k.gridX;
  r.grid[1] = k.gridY;
  r.grid[2] = k.gridZ;
  r.block[0] = k.blockX;
  r.block[1] = k.blockY;
  r.block[2] = k.blockZ;
  r.name_id = name_id(k.name, out);
  r.registers_per_thread = k.registersPerThread;
  r.static_shared_bytes = k.staticSharedMemory;
  r.dynamic_shared_bytes = k.dynamicSharedMemory;
  out.add(RecordType::Kernel, r);
  ++counts_.kernels;
}

template <typename Copy>
void ActivityProcessor::memcpy(const Copy& m, SidecarBatch& out) {
  if (m.start == 0 || m.end == 0) {
    ++counts_.untimed;
    return;
  }
  MemcpyRecord r{};
  r.start = m.start;
  r.end = m.end;
  r.bytes = m.bytes;
  r.cuda_device = m.deviceId;
  r.context_id = m.contextId;
  r.stream_id = m.streamId;
  r.correlation_id = m.correlationId;
  r.copy_kind = m.copyKind;
  r.src_kind = m.srcKind;
  r.dst_kind = m.dstKind;
  r.flags = m.flags;
  out.add(RecordType::Memcpy, r);
  ++counts_.memcpys;
}

void ActivityProcessor::memset(const MemsetActivity& m, SidecarBatch& out) {
  if (m.start == 0 || m.end == 0) {
    ++counts_.untimed;
    return;
  }
  MemsetRecord r{};
  r.start = m.start;
  r.end = m.end;
  r.bytes = m.bytes;
  r.cuda_device = m.deviceId;
  r.context_id = m.contextId;
  r.stream_id = m.streamId;
  r.correlation_id = m.correlationId;
  r.value = m.value;
  r.memory_kind = m.memoryKind;
  r.flags = m.flags;
  out.add(RecordType::Memset, r);
  ++counts_.memsets;
}

void ActivityProcessor::device(const DeviceActivity& d, SidecarBatch& out) {
  // CUPTI also describes GPUs CUDA_VISIBLE_DEVICES hides; their id is no CUDA ordinal here.
  if (d.isCudaVisible == 0) return;
  // CUPTI 13 leaves d.name for the client to free(); a few bytes per GPU are left instead, so
  // that records CUPTI did not allocate (the tests') are safe too.
  DeviceRecord r{};
  r.cuda_device = d.id;
  r.flags = kDeviceHasUuid | (d.isMigEnabled != 0 ? kDeviceMig : 0U);
  static_assert(sizeof(d.uuid) == sizeof(r.uuid));
  std::memcpy(r.uuid, &d.uuid, sizeof(r.uuid));
  out.add(RecordType::Device, r, d.name != nullptr ? std::string_view(d.name) : std::string_view());
  ++counts_.devices;
}

std::uint32_t ActivityProcessor::marker_name_id(const char* name, SidecarBatch& out) {
  if (name == nullptr) return 0;
  const std::string_view text(name);
  auto [it, added] = marker_names_.try_emplace(
      std::string(text), static_cast<std::uint32_t>(marker_names_.size() + 1));
  if (added) {
    const NameRecord record{it->second, 0};
    out.add(RecordType::MarkerName, record, text);
  }
  return it->second;
}

// An NVTX range's start (with its message and domain) or end, or an instant, of a thread or a
// process (CUPTI names one or the other).
void ActivityProcessor::marker(const MarkerActivity& m, SidecarBatch& out) {
  const auto flags = static_cast<std::uint32_t>(m.flags);
  const std::uint32_t kept = flags & (kMarkerInstant | kMarkerStart | kMarkerEnd);
  if (kept == 0 || m.timestamp == 0) {
    ++counts_.other;  // sync markers, or no time: not phases
    return;
  }
  MarkerRecord r{};
  r.timestamp = m.timestamp;
  r.id = m.id;
  r.flags = kept;
  if (m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
      m.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
    r.process_id = m.objectId.pt.processId;
    r.thread_id = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0;
  }
  if ((kept & kMarkerEnd) == 0) {
    r.name_id = marker_name_id(m.name, out);
    r.domain_id = marker_name_id(m.domain, out);
  }
  out.add(RecordType::Marker, r);
  ++counts_.markers;
}

void ActivityProcessor::marker_data(const MarkerDataActivity& m, SidecarBatch& out) {
  MarkerDataRecord r{};
  r.id = m.id;
  r.category = m.category;
  r.color = m.color;
  r.color_set = (static_cast<std::uint32_t>(m.flags) & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB) != 0;
  out.add(RecordType::MarkerData, r);
}

}  // namespace gpuscope::trace::cupti
