// The trace sidecar file: what the CUPTI injection library (libgpuscope_cupti.so) of one traced
// CUDA process appends while the job runs, and `gpuscope profile` imports into the run database
// when the job ends (docs/kernels.md, "How it works").
//
// Append-only and crash-safe: an 16-byte file header, then records of an 8-byte header (type,
// payload size) and a payload padded to 8 bytes. Records are written whole with write(2) on an
// O_APPEND descriptor, so a process that dies leaves every record it wrote before; a reader
// stops at a record cut short (a kill during a write, a full disk) and keeps what came before.
// Numbers are in the byte order of the machine that wrote the file (the same machine reads it).
// Dependency-free: compiled into the injection library as well as gpuscope.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuscope::trace {

// "GSTRACE" and a NUL: the first 8 bytes of every sidecar file.
inline constexpr char kSidecarMagic[8] = {'G', 'S', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr std::uint32_t kSidecarVersion = 1;
// Sidecar files are named <host>.<pid>.<n>.gstrace in the trace directory.
inline constexpr const char* kSidecarExtension = ".gstrace";
// The environment variables gpuscope sets for the job.
inline constexpr const char* kTraceDirVariable = "GPUSCOPE_TRACE_DIR";
inline constexpr const char* kInjectionVariable = "CUDA_INJECTION64_PATH";
// NVTX loads the library named here at a process's first NVTX call (the library forwards it to
// CUPTI's NVTX support), and what the library records: "kernels", "nvtx" or both, comma-separated.
inline constexpr const char* kNvtxInjectionVariable = "NVTX_INJECTION64_PATH";
inline constexpr const char* kTraceKindsVariable = "GPUSCOPE_TRACE_KINDS";

struct FileHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t reserved;
};
static_assert(sizeof(FileHeader) == 16);

enum class RecordType : std::uint32_t {
  Process = 1,      // ProcessRecord, then the command line (arguments NUL-separated)
  Calibration = 2,  // CalibrationRecord
  Device = 3,       // DeviceRecord, then the device's name
  Name = 4,         // NameRecord, then the kernel name as CUDA reports it
  Kernel = 5,       // KernelRecord
  Memcpy = 6,       // MemcpyRecord
  Memset = 7,       // MemsetRecord
  Dropped = 8,      // DroppedRecord
  Note = 9,         // text: something that went wrong in the library, in words
  End = 10,         // EndRecord: the process flushed everything and ended normally
  Marker = 11,      // MarkerRecord: an NVTX range's start or end, or an instant (--trace-nvtx)
  MarkerName = 12,  // NameRecord, then an NVTX message or domain name (their own id space)
  MarkerData = 13,  // MarkerDataRecord: a marker's category and colour
};

struct RecordHeader {
  std::uint32_t type;  // RecordType
  std::uint32_t size;  // payload bytes, before padding to a multiple of 8
};
static_assert(sizeof(RecordHeader) == 8);

// How the activity timestamps were taken.
enum class TimestampSource : std::uint32_t {
  CuptiDefault = 0,  // CUPTI's own clock (CLOCK_REALTIME on Linux): convert by calibration
  Monotonic = 1,     // CUPTI called our CLOCK_MONOTONIC callback: already on gpuscope's clock
};

struct ProcessRecord {
  std::int64_t pid;
  std::int64_t parent_pid;
  std::uint32_t cupti_version;     // CUPTI_API_VERSION at build time
  std::uint32_t timestamp_source;  // TimestampSource
  char host[64];                   // gethostname, NUL-terminated
};
static_assert(sizeof(ProcessRecord) == 88);

enum class CalibrationPoint : std::uint32_t { Start = 0, Buffer = 1, End = 2 };

// One reading of CUPTI's clock between two readings of each of gpuscope's clocks: the midpoints
// are taken as simultaneous with it.
struct CalibrationRecord {
  std::uint64_t cupti_ns;
  std::int64_t mono_ns;
  std::int64_t wall_ns;
  std::uint32_t point;           // CalibrationPoint
  std::uint32_t uncertainty_ns;  // half the width of the mono readings around cuptiGetTimestamp
};
static_assert(sizeof(CalibrationRecord) == 32);

// The bits of DeviceRecord::flags. Bit masks are or-ed and tested as integers, so they are
// constants in an unscoped enum, named kUpperCamelCase (CONTRIBUTING.md, "Naming"); so are
// MarkerFlags'.
enum DeviceFlags : std::uint32_t {
  kDeviceHasUuid = 1,
  kDeviceHasPci = 2,
  kDeviceMig = 4,
};

struct DeviceRecord {
  std::uint32_t cuda_device;  // CUDA's ordinal in this process
  std::uint32_t flags;        // DeviceFlags
  std::uint8_t uuid[16];      // CUuuid: the GPU's UUID bytes (the parent GPU's under MIG)
  std::uint32_t pci_domain;
  std::uint32_t pci_bus;
  std::uint32_t pci_device;
  std::uint32_t reserved;
};
static_assert(sizeof(DeviceRecord) == 40);

struct NameRecord {
  std::uint32_t name_id;  // 1, 2, ... in this file
  std::uint32_t reserved;
};
static_assert(sizeof(NameRecord) == 8);

struct KernelRecord {
  std::uint64_t start;  // CUPTI timestamps, ns
  std::uint64_t end;
  std::uint32_t cuda_device;
  std::uint32_t context_id;
  std::uint32_t stream_id;
  std::uint32_t correlation_id;
  std::int32_t grid[3];
  std::int32_t block[3];
  std::uint32_t name_id;  // a NameRecord written before this record
  std::uint32_t registers_per_thread;
  std::int32_t static_shared_bytes;
  std::int32_t dynamic_shared_bytes;
};
static_assert(sizeof(KernelRecord) == 72);

struct MemcpyRecord {
  std::uint64_t start;
  std::uint64_t end;
  std::uint64_t bytes;
  std::uint32_t cuda_device;
  std::uint32_t context_id;
  std::uint32_t stream_id;
  std::uint32_t correlation_id;
  std::uint8_t copy_kind;  // CUpti_ActivityMemcpyKind
  std::uint8_t src_kind;   // CUpti_ActivityMemoryKind
  std::uint8_t dst_kind;
  std::uint8_t flags;
  std::uint32_t reserved;
};
static_assert(sizeof(MemcpyRecord) == 48);

struct MemsetRecord {
  std::uint64_t start;
  std::uint64_t end;
  std::uint64_t bytes;
  std::uint32_t cuda_device;
  std::uint32_t context_id;
  std::uint32_t stream_id;
  std::uint32_t correlation_id;
  std::uint32_t value;
  std::uint16_t memory_kind;
  std::uint16_t flags;
};
static_assert(sizeof(MemsetRecord) == 48);

// CUPTI's marker flags (CUpti_ActivityFlag) that gpuscope keeps.
enum MarkerFlags : std::uint32_t {
  kMarkerInstant = 1 << 0,  // CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS
  kMarkerStart = 1 << 1,    // CUPTI_ACTIVITY_FLAG_MARKER_START
  kMarkerEnd = 1 << 2,      // CUPTI_ACTIVITY_FLAG_MARKER_END
};

struct MarkerRecord {
  std::uint64_t timestamp;   // CUPTI timestamp, ns
  std::uint32_t id;          // pairs a range's start with its end
  std::uint32_t flags;       // MarkerFlags
  std::uint32_t process_id;  // the process (and thread) that marked
  std::uint32_t thread_id;   // 0 when CUPTI names only the process
  std::uint32_t name_id;     // a marker_name record before this one; 0 for an end
  std::uint32_t domain_id;   // a marker_name record; 0 for NVTX's default domain
};
static_assert(sizeof(MarkerRecord) == 32);

struct MarkerDataRecord {
  std::uint32_t id;  // the marker's id
  std::uint32_t category;
  std::uint32_t color;  // ARGB, when color_set
  std::uint32_t color_set;
};
static_assert(sizeof(MarkerDataRecord) == 16);

struct DroppedRecord {
  std::uint64_t count;  // records CUPTI could not store, or records of a kind not recognised
};
static_assert(sizeof(DroppedRecord) == 8);

struct EndRecord {
  std::int64_t mono_ns;
};
static_assert(sizeof(EndRecord) == 8);

// Payloads are padded to this alignment.
inline constexpr std::size_t kRecordAlignment = 8;
inline constexpr std::size_t padded_size(std::size_t size) {
  return (size + kRecordAlignment - 1) / kRecordAlignment * kRecordAlignment;
}

}  // namespace gpuscope::trace
