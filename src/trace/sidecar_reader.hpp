// Reading a trace sidecar file (trace/sidecar_format.hpp) in two passes: the small part first
// (the process, calibrations, devices, kernel names, notes, counts), then the activity records
// one at a time, so a file of millions of kernels needs memory for one record.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trace/sidecar_format.hpp"

namespace gpuscope::trace {

struct PciAddress {
  std::uint32_t domain = 0;
  std::uint32_t bus = 0;
  std::uint32_t device = 0;
  bool operator==(const PciAddress&) const = default;
};

// What one process's records say about one CUDA device (UUID and PCI address may come from two
// records: the DEVICE activity and the context-creation callback).
struct SidecarDevice {
  std::uint32_t cuda_device = 0;
  std::optional<std::array<std::uint8_t, 16>> uuid;
  std::optional<PciAddress> pci;
  bool mig = false;
  std::string name;
};

struct SidecarMeta {
  std::filesystem::path file;
  std::optional<ProcessRecord> process;
  std::string command;  // arguments joined by spaces
  std::vector<CalibrationRecord> calibrations;
  std::map<std::uint32_t, SidecarDevice> devices;         // by CUDA ordinal
  std::map<std::uint32_t, std::string> names;             // by name id
  std::map<std::uint32_t, std::string> marker_names;      // NVTX messages and domains, by id
  std::map<std::uint32_t, MarkerDataRecord> marker_data;  // by marker id
  std::int64_t markers = 0;
  std::vector<std::string> notes;  // the library's own words
  std::uint64_t dropped = 0;
  std::int64_t kernels = 0;
  std::int64_t memcpys = 0;
  std::int64_t memsets = 0;
  bool ended = false;            // an end record: the process flushed and exited normally
  std::int64_t end_mono_ns = 0;  // when it did (CLOCK_MONOTONIC)
  bool truncated = false;        // the file ends inside a record (the process died while writing)
  bool unknown_records = false;  // records of types this gpuscope does not know (skipped)
};

// Reads everything but the activity records. Throws gpuscope::Error naming the file when it
// cannot be read or is not a sidecar file of a version this gpuscope knows.
SidecarMeta read_sidecar_meta(const std::filesystem::path& file);

// Receives the activity records of a file, in file order.
class ActivityVisitor {
 public:
  virtual ~ActivityVisitor() = default;
  virtual void kernel(const KernelRecord& record) = 0;
  virtual void memcpy(const MemcpyRecord& record) = 0;
  virtual void memset(const MemsetRecord& record) = 0;
  virtual void marker(const MarkerRecord& /*record*/) {}
};

// Calls `visitor` for each kernel, memcpy, memset and marker record up to the end or the first
// record cut short. Throws gpuscope::Error as read_sidecar_meta does.
void for_each_activity(const std::filesystem::path& file, ActivityVisitor& visitor);

// The sidecar files (*.gstrace) in `dir`, by name; none when it does not exist.
std::vector<std::filesystem::path> sidecar_files(const std::filesystem::path& dir);

}  // namespace gpuscope::trace
