// Turns CUPTI activity buffers into sidecar records (trace/sidecar_format.hpp): kernels
// (CONCURRENT_KERNEL or KERNEL), memcpy (MEMCPY, and MEMCPY2 for peer copies), memset and device
// records, laid out as the CUPTI headers of the toolkit gpuscope is built with define them. The
// buffer-completed callback of the injection library calls process_buffer(); so do the tests,
// with buffers of records they build themselves.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "trace/sidecar_writer.hpp"

namespace gpuscope::trace::cupti {

// The newest record layouts of the CUPTI this is built with (CUDA 13: CUPTI_API_VERSION 130001).
using KernelActivity = CUpti_ActivityKernel10;
using MemcpyActivity = CUpti_ActivityMemcpy6;
using PeerMemcpyActivity = CUpti_ActivityMemcpyPtoP4;
using MemsetActivity = CUpti_ActivityMemset4;
using DeviceActivity = CUpti_ActivityDevice5;
using MarkerActivity = CUpti_ActivityMarker2;
using MarkerDataActivity = CUpti_ActivityMarkerData2;

struct ProcessorCounts {
  std::uint64_t kernels = 0;
  std::uint64_t memcpys = 0;
  std::uint64_t memsets = 0;
  std::uint64_t devices = 0;
  std::uint64_t markers = 0;
  std::uint64_t untimed = 0;  // kernels/copies CUPTI gave no timestamps (0) for; left out
  std::uint64_t other = 0;    // records of kinds not recorded
  std::uint64_t buffers = 0;
};

class ActivityProcessor {
 public:
  // Appends to `out` a sidecar record for every activity record in the first `valid_bytes` of
  // `buffer` (walked with cuptiActivityGetNextRecord, as CUPTI documents), and a NameRecord
  // before the first kernel of each name. Not thread-safe: the caller serialises calls.
  void process_buffer(std::uint8_t* buffer, std::size_t valid_bytes, SidecarBatch& out);

  const ProcessorCounts& counts() const { return counts_; }

 private:
  std::uint32_t name_id(const char* name, SidecarBatch& out);
  void kernel(const KernelActivity& k, SidecarBatch& out);
  // A MEMCPY or a MEMCPY2 (peer) activity: the same record from the fields they share.
  template <typename Copy>
  void memcpy(const Copy& m, SidecarBatch& out);
  void memset(const MemsetActivity& m, SidecarBatch& out);
  void device(const DeviceActivity& d, SidecarBatch& out);
  void marker(const MarkerActivity& m, SidecarBatch& out);
  void marker_data(const MarkerDataActivity& m, SidecarBatch& out);
  std::uint32_t marker_name_id(const char* name, SidecarBatch& out);

  std::unordered_map<std::string, std::uint32_t> names_;
  std::unordered_map<std::string, std::uint32_t> marker_names_;
  ProcessorCounts counts_;
};

}  // namespace gpuscope::trace::cupti
